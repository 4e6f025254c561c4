"""The store key and secrets: OS keyring first, passphrase-guarded key file where there is none."""

from __future__ import annotations

import base64
import json
import logging
import stat
import sys
import threading
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import keyring
import keyring.backend
import keyring.errors
import pytest
from keyring.backends import fail, null

from tallei_desktop.core.errors import KeyUnavailable, StoreUnavailable, WrongKey
from tallei_desktop.core.keys import (
    KEY_FILE_NAME,
    KEYRING_SERVICE,
    SecretStore,
    StoreKey,
    random_token,
)
from tests.support.keyring_backend import BrokenKeyring, MemoryKeyring

PASSPHRASE = "correct horse battery staple"


def no_keyrings() -> list[keyring.backend.KeyringBackend]:
    """Every way of having no keyring: keyring's own stand-ins, and one that raises when called."""
    # keyring's backend constructors carry no annotations.
    return [fail.Keyring(), null.Keyring(), BrokenKeyring()]  # type: ignore[no-untyped-call]


@pytest.fixture(params=no_keyrings(), ids=lambda backend: type(backend).__module__)
def no_keyring(request: pytest.FixtureRequest) -> keyring.backend.KeyringBackend:
    backend: keyring.backend.KeyringBackend = request.param
    return backend


def test_store_key_is_created_in_the_keyring_and_read_back_by_a_new_instance(
    tmp_path: Path,
) -> None:
    backend = MemoryKeyring()

    first = SecretStore(tmp_path, backend=backend).store_key()
    again = SecretStore(tmp_path, backend=backend).store_key(create=False)

    assert len(first.key) == 32
    assert again.key == first.key
    assert "keyring" in first.source.lower()
    username = f"store-key:{tmp_path.resolve()}"
    assert backend.passwords == {(KEYRING_SERVICE, username): first.hex()}
    assert not (tmp_path / KEY_FILE_NAME).exists()


def test_source_names_the_keyring_backend_in_use(tmp_path: Path) -> None:
    store = SecretStore(tmp_path, backend=MemoryKeyring())

    assert store.source == f"OS keyring ({MemoryKeyring.name})"


def test_each_data_folder_gets_its_own_key(tmp_path: Path) -> None:
    backend = MemoryKeyring()

    one = SecretStore(tmp_path / "one", backend=backend).store_key()
    two = SecretStore(tmp_path / "two", backend=backend).store_key()

    assert one.key != two.key


def test_same_folder_named_two_ways_shares_one_key(tmp_path: Path) -> None:
    backend = MemoryKeyring()
    (tmp_path / "data").mkdir()

    direct = SecretStore(tmp_path / "data", backend=backend).store_key()
    roundabout = SecretStore(tmp_path / "data" / ".." / "data", backend=backend).store_key()

    assert roundabout.key == direct.key


def test_create_false_on_an_empty_keyring_refuses_and_creates_nothing(tmp_path: Path) -> None:
    backend = MemoryKeyring()

    with pytest.raises(KeyUnavailable, match="holds no store key"):
        SecretStore(tmp_path, backend=backend).store_key(create=False)

    assert backend.passwords == {}


def test_damaged_keyring_entry_is_reported_and_left_alone(tmp_path: Path) -> None:
    backend = MemoryKeyring()
    entry = (KEYRING_SERVICE, f"store-key:{tmp_path.resolve()}")
    backend.passwords[entry] = "not hex at all"

    with pytest.raises(StoreUnavailable, match="damaged"):
        SecretStore(tmp_path, backend=backend).store_key()

    assert backend.passwords[entry] == "not hex at all"


def test_keyring_secret_is_created_once_and_stable_across_instances(tmp_path: Path) -> None:
    backend = MemoryKeyring()
    made: list[str] = []

    def factory() -> str:
        made.append(random_token())
        return made[-1]

    first = SecretStore(tmp_path, backend=backend).secret("http-token", factory=factory)
    again = SecretStore(tmp_path, backend=backend).secret("http-token", factory=factory)

    assert made == [first]
    assert again == first
    assert backend.passwords[KEYRING_SERVICE, f"http-token:{tmp_path.resolve()}"] == first


def test_replaced_keyring_secret_is_what_the_next_instance_reads(tmp_path: Path) -> None:
    backend = MemoryKeyring()
    SecretStore(tmp_path, backend=backend).secret("http-token", factory=random_token)

    SecretStore(tmp_path, backend=backend).replace_secret("http-token", "rotated")

    read = SecretStore(tmp_path, backend=backend).secret("http-token", factory=random_token)
    assert read == "rotated"


def test_without_keyring_a_passphrase_creates_a_private_key_file_that_reopens(
    tmp_path: Path, no_keyring: keyring.backend.KeyringBackend
) -> None:
    created = SecretStore(tmp_path, passphrase=PASSPHRASE, backend=no_keyring).store_key()

    key_file = tmp_path / KEY_FILE_NAME
    reopened = SecretStore(tmp_path, passphrase=PASSPHRASE, backend=no_keyring).store_key(create=False)
    assert reopened.key == created.key
    assert len(created.key) == 32
    assert created.source == f"passphrase (key file {key_file.resolve()})"
    if sys.platform != "win32":
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    document = json.loads(key_file.read_text("utf-8"))
    assert (document["version"], document["kdf"]) == (1, "scrypt")
    assert (document["n"], document["r"], document["p"]) == (2**15, 8, 1)
    assert len(base64.b64decode(document["salt"])) == 16
    assert_not_inside(key_file, created.key)


def test_wrong_passphrase_is_refused_with_a_message_naming_the_store(tmp_path: Path) -> None:
    SecretStore(tmp_path, passphrase=PASSPHRASE, backend=BrokenKeyring()).store_key()
    before = (tmp_path / KEY_FILE_NAME).read_bytes()

    with pytest.raises(WrongKey) as caught:
        SecretStore(tmp_path, passphrase="wrong", backend=BrokenKeyring()).store_key()

    message = str(caught.value)
    assert message == f"The passphrase does not open the key file of the store at {tmp_path.resolve()}."
    assert "\n" not in message
    assert (tmp_path / KEY_FILE_NAME).read_bytes() == before


def test_no_keyring_and_no_passphrase_is_key_unavailable_and_writes_nothing(
    tmp_path: Path, no_keyring: keyring.backend.KeyringBackend
) -> None:
    store = SecretStore(tmp_path, backend=no_keyring)

    with pytest.raises(KeyUnavailable, match=r"no passphrase was given\.$") as caught:
        store.store_key()

    assert "TALLEI_" not in str(caught.value)

    assert list(tmp_path.iterdir()) == []
    assert store.source.startswith("none")


def test_empty_passphrase_counts_as_none(tmp_path: Path) -> None:
    with pytest.raises(KeyUnavailable):
        SecretStore(tmp_path, passphrase="", backend=BrokenKeyring()).store_key()


def test_key_file_without_passphrase_asks_for_the_passphrase(tmp_path: Path) -> None:
    SecretStore(tmp_path, passphrase=PASSPHRASE, backend=BrokenKeyring()).store_key()

    with pytest.raises(KeyUnavailable, match="guarded by a passphrase"):
        SecretStore(tmp_path, backend=MemoryKeyring()).store_key()


def test_create_false_without_key_file_refuses_and_creates_nothing(tmp_path: Path) -> None:
    store = SecretStore(tmp_path, passphrase=PASSPHRASE, backend=BrokenKeyring())

    with pytest.raises(KeyUnavailable, match="No store key was found"):
        store.store_key(create=False)

    assert not (tmp_path / KEY_FILE_NAME).exists()


def _valid_key_file(tmp_path: Path) -> dict[str, object]:
    store = SecretStore(tmp_path, passphrase=PASSPHRASE, backend=BrokenKeyring())
    store.store_key()
    store.secret("http-token", factory=random_token)
    document: dict[str, object] = json.loads((tmp_path / KEY_FILE_NAME).read_text("utf-8"))
    return document


def _flip_first_byte(b64: object) -> str:
    assert isinstance(b64, str)
    raw = bytearray(base64.b64decode(b64))
    raw[0] ^= 0xFF
    return base64.b64encode(bytes(raw)).decode("ascii")


@pytest.mark.parametrize(
    ("damage", "detail"),
    [
        (lambda doc: b"\x00\xff garbage", "not JSON"),
        (lambda doc: json.dumps(doc).encode()[:40], "not JSON"),
        (lambda doc: b"[1, 2]", "not a JSON object"),
        (lambda doc: json.dumps({**doc, "version": 9}).encode(), "unknown version"),
        (lambda doc: json.dumps({**doc, "kdf": "md5"}).encode(), "unknown kdf"),
        (lambda doc: json.dumps({**doc, "n": 1000}).encode(), "scrypt parameters"),
        (lambda doc: json.dumps({**doc, "n": 2**40}).encode(), "scrypt parameters"),
        (lambda doc: json.dumps({**doc, "salt": "%%%"}).encode(), "not base64"),
        (lambda doc: json.dumps({**doc, "nonce": "AAAA"}).encode(), "'nonce' is 3 bytes"),
        (lambda doc: json.dumps({**doc, "wrapped": "AAAA"}).encode(), "truncated"),
        (lambda doc: json.dumps({**doc, "secrets": []}).encode(), "'secrets'"),
    ],
    ids=[
        "garbage",
        "truncated",
        "array",
        "version",
        "kdf",
        "n-not-power-of-two",
        "n-too-costly",
        "salt-not-base64",
        "short-nonce",
        "short-wrapped",
        "secrets-not-object",
    ],
)
def test_damaged_key_file_is_store_unavailable_and_left_untouched(
    tmp_path: Path, damage: object, detail: str
) -> None:
    assert callable(damage)
    damaged: bytes = damage(_valid_key_file(tmp_path))
    key_file = tmp_path / KEY_FILE_NAME
    key_file.write_bytes(damaged)
    store = SecretStore(tmp_path, passphrase=PASSPHRASE, backend=MemoryKeyring())

    with pytest.raises(StoreUnavailable, match=detail) as caught:
        store.store_key()
    with pytest.raises(StoreUnavailable, match=detail):
        store.secret("http-token", factory=random_token)
    with pytest.raises(StoreUnavailable, match=detail):
        store.replace_secret("http-token", "new")

    assert str(key_file.resolve()) in str(caught.value)
    assert key_file.read_bytes() == damaged


def test_tampered_secret_is_reported_and_replacing_it_repairs_it(tmp_path: Path) -> None:
    document = _valid_key_file(tmp_path)
    secrets = document["secrets"]
    assert isinstance(secrets, dict)
    secrets["http-token"]["wrapped"] = _flip_first_byte(secrets["http-token"]["wrapped"])
    key_file = tmp_path / KEY_FILE_NAME
    key_file.write_text(json.dumps(document), "utf-8")
    damaged = key_file.read_bytes()
    store = SecretStore(tmp_path, passphrase=PASSPHRASE, backend=BrokenKeyring())

    with pytest.raises(StoreUnavailable, match="'http-token' does not decrypt"):
        store.secret("http-token", factory=random_token)
    assert key_file.read_bytes() == damaged

    store.replace_secret("http-token", "fresh")
    assert store.secret("http-token", factory=random_token) == "fresh"


def test_unreadable_key_file_is_store_unavailable(tmp_path: Path) -> None:
    # A directory in the key file's place cannot be read by anyone, root included.
    (tmp_path / KEY_FILE_NAME).mkdir()

    with pytest.raises(StoreUnavailable, match="Cannot read the key file"):
        SecretStore(tmp_path, passphrase=PASSPHRASE, backend=BrokenKeyring()).store_key()

    assert (tmp_path / KEY_FILE_NAME).is_dir()


def test_key_file_wins_over_a_working_keyring(tmp_path: Path) -> None:
    created = SecretStore(tmp_path, passphrase=PASSPHRASE, backend=BrokenKeyring()).store_key()
    backend = MemoryKeyring()

    store = SecretStore(tmp_path, passphrase=PASSPHRASE, backend=backend)
    found = store.store_key()
    token = store.secret("http-token", factory=random_token)

    assert found.key == created.key
    assert "passphrase" in store.source
    assert "passphrase" in found.source
    assert backend.passwords == {}
    assert SecretStore(tmp_path, passphrase=PASSPHRASE).secret("http-token", factory=str) == token


def test_locked_keyring_falls_back_to_the_passphrase_and_warns(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    locked = BrokenKeyring(keyring.errors.KeyringLocked("Failed to unlock the collection!"))

    with caplog.at_level(logging.WARNING, logger="tallei_desktop.core.keys"):
        key = SecretStore(tmp_path, passphrase=PASSPHRASE, backend=locked).store_key()

    assert "passphrase" in key.source
    assert (tmp_path / KEY_FILE_NAME).exists()
    assert any("Failed to unlock" in record.getMessage() for record in caplog.records)


def test_locked_keyring_without_passphrase_says_to_unlock_it(tmp_path: Path) -> None:
    locked = BrokenKeyring(keyring.errors.KeyringLocked("Failed to unlock the collection!"))

    with pytest.raises(KeyUnavailable, match="Unlock the keyring"):
        SecretStore(tmp_path, backend=locked).store_key()


def test_a_failing_keyring_is_asked_only_once_per_instance(tmp_path: Path) -> None:
    broken = BrokenKeyring()
    store = SecretStore(tmp_path, passphrase=PASSPHRASE, backend=broken)

    store.store_key()
    store.secret("http-token", factory=random_token)
    store.replace_secret("http-token", "rotated")
    _ = store.source

    assert broken.calls == 1


def test_file_secret_is_persisted_encrypted_and_stable_across_instances(tmp_path: Path) -> None:
    store = SecretStore(tmp_path, passphrase=PASSPHRASE, backend=BrokenKeyring())
    key = store.store_key()
    made: list[str] = []

    def factory() -> str:
        made.append(random_token())
        return made[-1]

    token = store.secret("http-token", factory=factory)
    same_instance = store.secret("http-token", factory=factory)
    other = SecretStore(tmp_path, passphrase=PASSPHRASE, backend=BrokenKeyring())
    other_instance = other.secret("http-token", factory=factory)

    assert made == [token]
    assert same_instance == other_instance == token
    assert other.store_key().key == key.key
    key_file = tmp_path / KEY_FILE_NAME
    assert token.encode() not in key_file.read_bytes()
    if sys.platform != "win32":
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600


def test_replaced_file_secret_is_what_the_next_instance_reads(tmp_path: Path) -> None:
    store = SecretStore(tmp_path, passphrase=PASSPHRASE, backend=BrokenKeyring())
    store.store_key()
    store.secret("http-token", factory=random_token)
    store.secret("other-secret", factory=lambda: "kept")

    store.replace_secret("http-token", "rotated")

    reader = SecretStore(tmp_path, passphrase=PASSPHRASE, backend=BrokenKeyring())
    assert reader.secret("http-token", factory=random_token) == "rotated"
    assert reader.secret("other-secret", factory=random_token) == "kept"


def test_file_secret_with_wrong_passphrase_is_wrong_key(tmp_path: Path) -> None:
    store = SecretStore(tmp_path, passphrase=PASSPHRASE, backend=BrokenKeyring())
    store.store_key()
    store.secret("http-token", factory=random_token)
    before = (tmp_path / KEY_FILE_NAME).read_bytes()

    intruder = SecretStore(tmp_path, passphrase="wrong", backend=BrokenKeyring())
    with pytest.raises(WrongKey):
        intruder.secret("http-token", factory=random_token)
    with pytest.raises(WrongKey):
        intruder.replace_secret("http-token", "stolen")

    assert (tmp_path / KEY_FILE_NAME).read_bytes() == before


def test_file_secret_before_the_store_key_exists_is_refused(tmp_path: Path) -> None:
    store = SecretStore(tmp_path, passphrase=PASSPHRASE, backend=BrokenKeyring())

    with pytest.raises(KeyUnavailable, match="no key file"):
        store.secret("http-token", factory=random_token)

    assert not (tmp_path / KEY_FILE_NAME).exists()


@pytest.mark.parametrize("name", ["", "store-key", "Upper", "a:b", "x" * 65, "-dash"])
def test_unusable_secret_names_are_rejected(tmp_path: Path, name: str) -> None:
    store = SecretStore(tmp_path, backend=MemoryKeyring())

    with pytest.raises(ValueError, match="secret name"):
        store.secret(name, factory=random_token)


def test_threads_creating_the_key_together_agree_on_one(tmp_path: Path) -> None:
    backend = MemoryKeyring()
    start = threading.Barrier(8)

    def create(passphrase: str | None) -> bytes:
        kind = backend if passphrase is None else BrokenKeyring()
        store = SecretStore(tmp_path / str(passphrase is None), passphrase=passphrase, backend=kind)
        start.wait(timeout=10)
        return store.store_key().key

    with ThreadPoolExecutor(max_workers=8) as pool:
        keys = list(pool.map(create, [None] * 4 + [PASSPHRASE] * 4))

    assert len(set(keys[:4])) == 1
    assert len(set(keys[4:])) == 1


def _create_key_in_subprocess(data_dir: str) -> str:
    store = SecretStore(Path(data_dir), passphrase=PASSPHRASE, backend=BrokenKeyring())
    return store.store_key().hex() + "/" + store.secret("http-token", factory=random_token)


def test_processes_creating_the_key_file_together_agree_on_one(tmp_path: Path) -> None:
    with ProcessPoolExecutor(max_workers=4, mp_context=get_context("spawn")) as pool:
        results = list(pool.map(_create_key_in_subprocess, [str(tmp_path)] * 4))

    assert len(set(results)) == 1
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_default_keyring_of_this_machine_is_used_or_the_passphrase_guards_the_key(
    tmp_path: Path,
) -> None:
    default = keyring.get_keyring()
    usable = not isinstance(default, (fail.Keyring, null.Keyring))
    if usable:
        try:
            default.get_password(KEYRING_SERVICE, "probe")
        except keyring.errors.KeyringError:
            usable = False
    without_passphrase = SecretStore(tmp_path)
    with_passphrase = SecretStore(tmp_path, passphrase=PASSPHRASE)

    if usable:
        try:
            key = without_passphrase.store_key()
            assert with_passphrase.store_key().key == key.key
            assert key.source == f"OS keyring ({default.name})"
            assert not (tmp_path / KEY_FILE_NAME).exists()
        finally:
            default.delete_password(KEYRING_SERVICE, f"store-key:{tmp_path.resolve()}")
    else:
        with pytest.raises(KeyUnavailable):
            without_passphrase.store_key()
        key = with_passphrase.store_key()
        assert key.source == f"passphrase (key file {(tmp_path / KEY_FILE_NAME).resolve()})"
        assert SecretStore(tmp_path, passphrase=PASSPHRASE).store_key().key == key.key


def test_store_key_never_shows_the_key_in_its_repr() -> None:
    key = StoreKey(bytes(range(32)), "test")

    assert key.hex() == bytes(range(32)).hex()
    assert key.hex() not in repr(key)
    assert repr(bytes(range(32))) not in repr(key)


def test_store_key_must_be_32_bytes() -> None:
    with pytest.raises(ValueError, match="32 bytes"):
        StoreKey(b"short", "test")


def test_random_tokens_are_long_and_distinct() -> None:
    tokens = {random_token() for _ in range(100)}

    assert len(tokens) == 100
    assert all(len(token) >= 43 for token in tokens)


def assert_not_inside(path: Path, key: bytes) -> None:
    """The key file must not hold the key in any plain encoding."""
    content = path.read_bytes()
    for encoded in (key, key.hex().encode(), base64.b64encode(key), key.hex().upper().encode()):
        assert encoded not in content
