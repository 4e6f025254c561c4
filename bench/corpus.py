"""A deterministic, seeded corpus of realistic memories and queries for the engine benchmark.

Memories cover all seven types, come from several platforms, and are filled from combinatorial
templates over large vocabularies (people, tools, places, projects, clients …), so texts are
distinct and read like what assistants actually save. Memory ``i`` depends only on the seed and on
the memories before it, so a corpus of 10,000 is the first 10,000 of a corpus of 50,000.

Queries come in two kinds: *exact* ones reuse words that occur in memories (names, places,
products: what people and assistants mostly do), *paraphrases* ask for the same things in other
words.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from datetime import datetime, timedelta

__all__ = ["PLATFORMS", "TYPES", "Corpus", "CorpusMemory"]

MIN_CHARS = 40
MAX_CHARS = 250

TYPES = ("preference", "fact", "decision", "event", "note", "lesson", "failure")
#: Share of each type: heavy on facts and short-lived events/notes, few standing preferences.
_TYPE_WEIGHTS = (4, 27, 12, 19, 15, 12, 11)
PLATFORMS = ("claude", "chatgpt", "cursor", "gemini")
_PLATFORM_WEIGHTS = (36, 30, 20, 14)
#: Events and notes carry the time they are about, spread over this many past days.
SPREAD_DAYS = 365


def _words(text: str) -> list[str]:
    """A vocabulary written as ``a | b | c`` over several lines."""
    return [" ".join(w.split()) for w in text.split("|") if w.strip()]


_FIRST = _words(
    """
    Priya | Mateo | Aisha | Jonas | Keiko | Omar | Lucia | Tomasz | Ngozi | Felix | Ingrid | Rahul | Sofia |
    Dmitri | Amara | Hiroshi | Chloe | Tariq | Elena | Kwame | Mei | Lars | Fatima | Diego | Hannah | Yusuf
    | Clara | Andrei | Zanele | Marco | Anya | Bilal | Isabel | Kenji | Leila | Oskar | Nadia | Samuel |
    Freya | Arjun | Beatriz | Emeka | Greta | Ravi | Yara | Paolo | Ines | Viktor | Sana | Henrik | Maya |
    Kofi | Astrid | Rohan | Camila | Niko | Leah | Farid | Elif | Tobias | Noor | Gabriel | Ayumi | Stefan
    """
)
_LAST = _words(
    """
    Raman | Okafor | Lindqvist | Tanaka | Haddad | Moreau | Novak | Silva | Petrov | Mensah | Fischer |
    Kowalski | Ibrahim | Nakamura | Costa | Jansen | Osei | Rossi | Schmidt | Dubois | Yilmaz | Park |
    Nguyen | Andersson | Ferreira | Horvat | Adeyemi | Bauer | Sato | Romero | Kaur | Eriksen | Mwangi |
    Becker | Conti | Larsen | Hoffmann | Delgado | Chen | Varga
    """
)
_CITIES = _words(
    """
    Lisbon | Berlin | Nairobi | Toronto | Osaka | Melbourne | Lagos | Bogota | Krakow | Austin | Dublin |
    Seoul | Copenhagen | Bangalore | Montreal | Edinburgh | Valencia | Helsinki | Porto | Denver | Singapore
    | Tallinn | Cape Town | Zurich | Vienna | Oslo | Kyoto | Seattle | Manila | Accra | Rotterdam | Lyon |
    Prague | Budapest | Istanbul | Auckland | Chicago
    """
)
_PROJECTS = _words(
    """
    Atlas | Borealis | Cobalt | Driftwood | Ember | Fjord | Granite | Halcyon | Ironbark | Juniper | Kestrel
    | Lumen | Meridian | Nimbus | Onyx | Pinecone | Quasar | Riverbed | Saffron | Tundra | Umbra | Vantage |
    Willow | Xenon | Yarrow | Zephyr | Aurora | Basalt | Cedar | Dynamo | Eclipse | Falcon | Glacier |
    Harbor | Indigo | Jasper | Keystone | Lighthouse | Monsoon | Nova
    """
)
_CLIENT_LIST = _words(
    """
    Acme Logistics | Bluefin Health | Corvid Media | Delta Foods | Everpine Bank | Fable Games | Gridline
    Energy | Hearth Insurance | Ivory Legal | Juno Travel | Kite Robotics | Lattice Labs | Mosaic Retail |
    Northwind Freight | Orbit Telecom | Pioneer Schools | Quill Publishing | Redwood Clinics | Summit
    Outdoors | Tidal Shipping | Umbrella Analytics | Vesta Pharma | Wavecrest Media | Yellowtail Foods
    """
)
_DBS = _words(
    """
    Postgres | MySQL | SQLite | MongoDB | Redis | Cassandra | DynamoDB | ClickHouse | Elasticsearch |
    CockroachDB | BigQuery | Snowflake | DuckDB | Neo4j
    """
)
_LANGS = _words(
    """
    Python | Rust | Go | TypeScript | Kotlin | Swift | Java | Elixir | C# | Ruby | Scala | Zig | Haskell |
    C++ | Dart | OCaml
    """
)
_FRAMEWORKS = _words(
    """
    React | Vue | Svelte | Django | FastAPI | Rails | Phoenix | Next.js | Flask | Spring Boot | Angular |
    SolidJS | Axum | Gin | Laravel | Remix | Flutter | Qt
    """
)
_TOOLS = _words(
    """
    Terraform | Kubernetes | Docker | Grafana | Prometheus | Sentry | Datadog | Kafka | RabbitMQ | Airflow |
    dbt | Jenkins | GitHub Actions | CircleCI | Vault | Nginx | Envoy | Helm | Ansible | LaunchDarkly |
    Temporal | Celery | Vite | Webpack | pnpm | Poetry | uv | ruff | mypy | pytest | Playwright | Cypress |
    Storybook | Figma | Linear | Jira | Notion | Obsidian | Tailscale | Cloudflare | Stripe | Twilio
    """
)
_CLOUDS = _words("AWS | GCP | Azure | Hetzner | Fly.io | DigitalOcean | Render | Vercel")
_REGIONS = _words(
    """
    eu-west-1 | us-east-1 | ap-south-1 | eu-central-1 | us-west-2 | ap-northeast-1 | sa-east-1 |
    ca-central-1 | af-south-1 | eu-north-1
    """
)
_TOPICS = _words(
    """
    billing | search ranking | onboarding flow | checkout | notifications | auth | image pipeline |
    reporting | data warehouse | mobile sync | invoicing | recommendations | audit log | feature flags |
    rate limiting | email digests | payments | CSV import | permissions | analytics events | GDPR export |
    video transcoding | push gateway | pricing page | customer portal | SSO integration | fraud scoring |
    inventory sync
    """
)
_TEAMS = _words(
    """
    platform | growth | payments | mobile | data | infra | design systems | security | support tooling | ML
    | web | partnerships
    """
)
_ROLES = _words(
    """
    tech lead | engineering manager | product manager | staff engineer | designer | data scientist | SRE |
    QA lead | CTO | security engineer | developer advocate | recruiter
    """
)
_EDITORS = _words("Neovim | VS Code | Zed | Emacs | IntelliJ | Helix | Sublime Text | PyCharm | Cursor")
_THEMES = _words("Gruvbox | Solarized Dark | Catppuccin | Nord | Dracula | One Dark | Tokyo Night")
_FONTS = _words("JetBrains Mono | Fira Code | Iosevka | Cascadia Code | Berkeley Mono | Hack")
_FOODS = _words(
    """
    ramen | falafel wraps | poke bowls | dosa | pho | tacos | sushi | jollof rice | pierogi | shakshuka |
    bibimbap | pad thai | lentil soup | empanadas | banh mi
    """
)
_DRINKS = _words("oat flat whites | green tea | sparkling water | espresso | chai | yerba mate | rooibos")
_RESTAURANTS = _words(
    """
    Casa Lume | The Copper Pot | Sakura Garden | Blue Door Bistro | Olive & Thyme | Mama Ngozi's | Little
    Saigon | Harbour Grill | Nonna Rosa | Spice Route
    """
)
_HOBBIES = _words(
    """
    bouldering | trail running | chess | sourdough baking | birdwatching | cycling | film photography |
    sailing | pottery | salsa dancing | board games | kayaking
    """
)
_SPORTS = _words("football | basketball | swimming | tennis | judo | cricket | volleyball | hockey")
_MEETINGS = _words(
    """
    1:1 | quarterly review | design review | sprint retro | kickoff call | budget meeting | architecture
    review | customer call | all-hands | planning session | incident review
    """
)
_CONFERENCES = _words(
    """
    PyCon | KubeCon | RustConf | JSConf | Web Summit | re:Invent | GopherCon | DevOpsDays | Strange Loop |
    SREcon | DjangoCon | NeurIPS
    """
)
_FEATURES = _words(
    """
    bulk export | dark mode | SAML login | offline mode | usage alerts | audit trail | saved searches |
    two-factor auth | webhooks | CSV download | team invites | API keys
    """
)
_METRICS = _words(
    """
    p95 latency | churn | conversion | error rate | cold start time | build time | signup drop-off | cloud
    spend | queue depth | time to first byte | NPS
    """
)
_ENVS = _words("staging | production | dev | QA | load-test | canary")
_OSES = _words("Alpine | Ubuntu 20.04 | CentOS 7 | macOS 12 | Windows Server 2016 | Debian 10")
_LANGUAGES = _words(
    """
    Portuguese | German | Japanese | Swahili | Spanish | French | Polish | Hindi | Korean | Arabic | Dutch |
    Turkish | Yoruba | Finnish
    """
)
_ALLERGENS = _words("peanuts | shellfish | penicillin | cats | pollen | lactose | sesame")
_MONTHS = _words(
    """
    January | February | March | April | May | June | July | August | September | October | November |
    December
    """
)
_WEEKDAYS = _words("Monday | Tuesday | Wednesday | Thursday | Friday")
_QUARTERS = _words("Q1 | Q2 | Q3 | Q4")
_SKILLS = _words(
    """
    system design | SQL | testing | communication | debugging | Kubernetes | API design | frontend
    performance | data modelling | incident handling
    """
)
_THINGS = _words(
    """
    TLS certificate | domain name | passport | gym membership | car insurance | Apple developer account |
    JetBrains licence | visa | office lease | SOC 2 report
    """
)
_TASKS = _words(
    """
    linting | formatting | dependency management | load testing | end-to-end tests | secrets management |
    task queues | schema migrations | feature flags | error tracking | dashboards | infrastructure as code |
    note taking | diagramming | local dev
    """
)
_REASONS = _words(
    """
    the type checker | the ecosystem | startup time | the error messages | team familiarity | the tooling |
    memory use | hiring
    """
)
_COLUMNS = _words("created_at | tenant_id | user_id | status | email | order_id | updated_at")

# Templates per type. Each slot name maps to a vocabulary (or a generator) in ``Corpus._fill``.
_TEMPLATES: dict[str, tuple[str, ...]] = {
    "preference": (
        "I prefer {drink} over coffee in the morning.",
        "Call me {first}, never by my full name.",
        "I prefer {lang} over {lang2} for {task}, mostly because of {reason}.",
        "Call me {first} in casual chats, but use {first} {last} in anything formal or client-facing.",
        "Always use {indent} and {quotes} quotes in my {lang} code, and keep lines under {width} characters.",
        "My favourite editor is {editor} with the {theme} theme and {font} at {size}pt.",
        "Please keep answers short, use {units} units and assume I'm in the {city} time zone.",
        "I like {food} for lunch and usually go for {drink} in the afternoon.",
        "When suggesting {lang} libraries, default to {framework}-friendly ones unless I say otherwise.",
        "I'd rather get bullet-point summaries than long prose when you review {topic} changes.",
        "I always use {tool} for {task} in my projects; don't suggest {tool2}.",
        "I'm a morning person: schedule deep work on {topic} before {hour} am, meetings after lunch.",
        "My go-to stack for side projects is {framework} on {cloud} with {db}.",
        "I prefer {units} units, 24-hour times and dates written like 3 {month}.",
        "For weekends I enjoy {hobby} and {hobby2}; suggest plans around {city} that fit.",
        "I prefer {editor} keybindings everywhere and dark mode in every tool, including {tool}.",
        "Please reply in English, but I like {language} phrases explained when {first} sends them.",
    ),
    "fact": (
        "{first} {last} lives in {city} and works at {client}.",
        "{project} runs on {cloud} in {region}.",
        "{first} {last} is the {role} on the {team} team and sits in the {city} office.",
        "Project {project} stores its data in {db} {version} hosted on {cloud} in {region}.",
        "The {topic} service is written in {lang} with {framework} and is deployed with {tool} to {cloud}.",
        "{client}'s contract renews every {month} and covers {seats} seats of the enterprise plan.",
        "{first}'s daughter {first2} is {age} years old and plays {sport} on weekends.",
        "The {project} repo uses {tool} for CI and {tool2} for {task}; the default branch is main.",
        "Our {env} cluster for {project} runs {nodes} nodes in {cloud} {region}.",
        "{first} {last} speaks {language} and {language2} and works from {city} on {weekday}s.",
        "The {topic} dashboard in {tool} tracks {metric} for {client}; {first} owns it.",
        "I am allergic to {allergen}; my doctor is Dr. {last} at the {city} clinic.",
        "{client} is our biggest customer in {city}; their main contact is {first} {last}, {role}.",
        "The {topic} API of {project} is rate limited to {rps} requests per second per tenant.",
        "{first} {last} joined the {team} team in {month} from {client} and knows {tool} well.",
        "The {env} database for {project} is {db} on port {port}, backed up nightly to {cloud}.",
        "My partner {first} works as a {role} at {client} and commutes to {city} on {weekday}s.",
        "{project} has about {users} monthly active users, mostly in {city} and {city2}.",
    ),
    "decision": (
        "We're going with {db} for {project} {topic}.",
        "Decided: {first} leads {project} from {month}.",
        "We decided to migrate {topic} from {db} to {db2} before the {quarter} release of {project}.",
        "Going with {framework} for the {project} frontend instead of {framework2}; {first} signed off.",
        "We agreed that the {team} team owns {topic} going forward, with {first} {last} as point of contact.",
        "Decision: {project} ships {feature} behind a {tool} flag and rolls out to {pct}% of users first.",
        "We chose {cloud} over self-hosting {tool} for {topic}, mainly because of on-call load.",
        "From now on every {lang} service in {project} uses {tool} for {task}.",
        "Settled on {weeks}-week sprints for the {team} team starting in {month}.",
        "We will drop {os} support in {project} {version}; {first} will announce it to {client}.",
        "Decided to hire a {role} for the {team} team in {quarter} instead of a contractor.",
        "We're consolidating {topic} and {topic2} into one {lang} service owned by {first}.",
        "Final call from {first} {last}: {project} keeps {db} and adds {db2} only for {topic} analytics.",
        "We opted for {tool} over {tool2} for {task} across all {team} repositories.",
    ),
    "event": (
        "Met {first} {last} for coffee in {city} on {date}.",
        "Booster shot on {date} in {city}.",
        "Had the {meeting} with {first} {last} about {topic} on {date}; next step is a written proposal.",
        "{first} presented the {project} demo to {client} on {date} and they asked about {feature}.",
        "Flew to {city} on {date} for {conference} and met {first} {last} from {client}.",
        "Dentist appointment with Dr. {last} in {city} on {date} at {hour}:30.",
        "Shipped {project} {version} to production on {date} after the {topic} fixes landed.",
        "Interviewed {first} {last} for the {role} role on {date}; strong on {skill}, weaker on {skill2}.",
        "The {team} team offsite in {city} took place on {date}; we planned the {quarter} roadmap.",
        "{first}'s birthday dinner at {restaurant} in {city} on {date}, booked for {guests} people.",
        "Kicked off the {client} engagement on {date} with {first} {last} and the {team} team.",
        "Ran the {project} load test on {date}: {rps} requests per second before {metric} degraded.",
        "Paired with {first} on the {topic} refactor on {date}, mostly in the {lang} parts.",
        "Attended the {meeting} on {date} where {client} renewed for another year.",
    ),
    "note": (
        "Todo: ask {first} {last} about the {thing}.",
        "Idea: try {tool} for {task}.",
        "Note to self: look into {tool} for {task} in {project}; {first} mentioned it.",
        "Idea: {feature} for {topic} could cut {metric} by {pct}% for {client}.",
        "Maybe try {restaurant} in {city} sometime; {first} said the {food} is great.",
        "Not sure {tool} handles {topic} well at {rps} requests per second; worth checking later.",
        "Reminder: renew the {thing} before {month}; {first} {last} has the paperwork.",
        "FYI {first} seems happier with async updates on {topic} than with meetings.",
        "Worth reading later: {first}'s write-up on {topic} in the {tool} wiki.",
        "Thinking about moving {project} {env} from {cloud} to {cloud2} at some point.",
        "Todo: check whether the {topic} job in {project} still needs {db} at all.",
        "Jotting this down: {client} might want {feature} in {quarter}, ask {first} {last}.",
        "Could try {hobby} in {city}; {first} knows a good group that meets on {weekday}s.",
        "Keep an eye on {metric} for {project} after the {tool} upgrade; it looked a bit high.",
    ),
    "lesson": (
        "Never deploy {project} without a {tool} dry run.",
        "Lesson: write {topic} tests first.",
        "Lesson learned: always pin {tool} versions in {project}, otherwise {lang} builds drift.",
        "Best practice for {topic}: run {db} migrations in a separate deploy step before the code change.",
        "Learned the hard way that {db} needs an index on {column} once tables pass {rows} rows.",
        "Next time, loop in the {team} team before touching {topic}; it saves us a week of rework.",
        "Rule of thumb from {first}: never deploy {project} on a {weekday} afternoon.",
        "Turns out {tool} caches {topic} results for {minutes} minutes, so test changes with the cache off.",
        "Takeaway from the {client} launch: write the {feature} docs before the demo, not after.",
        "In hindsight we should have load-tested {project} with {tool} before the {month} launch.",
        "Better to ask {first} {last} about {topic} early; they know the {db} schema best.",
        "Never run {tool} against {env} without a dry run first; the diff on {project} is easy to misread.",
        "Lesson from {conference}: keep {lang} services small and let {tool} handle {task}.",
        "Good practice: give every {topic} job in {project} an idempotency key, otherwise retries duplicate.",
    ),
    "failure": (
        "{project} {env} went down after the {tool} upgrade.",
        "The {topic} export failed for {client}.",
        "The {topic} service crashed on {date} after a {db} failover; about {count} requests failed.",
        "Outage: {cloud} {region} went down for {minutes} minutes and took {project} {env} with it.",
        "Postmortem for {project}: a bad {tool} config broke {feature} for {client} users.",
        "The {lang} build for {project} failed because {tool} {version} dropped support for {os}.",
        "{db} ran out of disk on the {env} cluster and the {topic} jobs timed out overnight.",
        "Regression in {project} {version}: {feature} returned 500 errors for {pct}% of {client} requests.",
        "The {client} demo went badly: {project} froze on the {topic} screen and {first} had to restart it.",
        "Memory leak in the {topic} worker of {project}; {tool} killed it every {minutes} minutes.",
        "Data loss incident: the {topic} export for {client} silently dropped rows with an empty {column}.",
        "The {month} release of {project} was rolled back after {metric} doubled within an hour.",
        "Our {tool} pipeline broke when {first} rotated the {cloud} keys; deploys were blocked for a day.",
        "Failed the {client} security review: {feature} leaked {column} values in {tool} logs.",
    ),
}

_SLOT = re.compile(r"\{(\w+)\}")

_SUFFIXES = (
    "",
    "",
    "",
    " Follow up with {first} by {weekday}.",
    " ({client} account.)",
    " {first} agreed.",
    " Mentioned again in the {team} channel.",
    " Source: the {meeting} with {first}.",
    " Relevant to {project} too.",
    " Context: {first} {last} raised it during the {meeting} with {client}, and the {team} team wants"
    " a written summary of what changed and why by {weekday}, with {metric} numbers before and after.",
)

_EXACT_QUERIES = (
    "{project} {db}",
    "what does {first} {last} do",
    "{client} contract",
    "{cloud} {region} outage",
    "{city} offsite",
    "Dr. {last} appointment",
    "{lang} build {project}",
    "{framework} decision {project}",
    "{topic} service {lang}",
    "{first}'s birthday",
    "{project} {version} release",
    "{tool} for {task}",
    "{topic} dashboard {client}",
    "{conference} {city}",
    "{feature} {client}",
    "{db} index {column}",
    "{team} team {topic}",
    "who is {first} {last}",
    "{restaurant} {city}",
    "{env} cluster {project}",
)
_PARAPHRASE_QUERIES = (
    "how do I like my code formatted in {lang}",
    "which datastore did we settle on for the {topic} work",
    "anything about trips to {city} recently",
    "what went wrong with deployments on {project}",
    "my preferences for when to schedule meetings",
    "who is responsible for {topic} now",
    "lessons about database schema changes",
    "what should I avoid doing on {weekday}s",
    "problems we had with {cloud} hosting",
    "what food do I enjoy at lunchtime",
    "things I wanted to look into about {task}",
    "how big is our biggest customer account",
    "what did the {client} people ask for in the demo",
    "past incidents where data went missing",
    "which text editor setup do I use",
    "how many people use the {project} product",
    "upcoming renewals I should not forget",
    "earlier hiring interviews for the {team} group",
    "why did the {topic} system go down",
    "what did we agree on about sprint length",
    "tips for testing under heavy traffic",
    "what are my hobbies at the weekend",
    "medical things I should keep in mind",
    "the frontend technology choice we made for {project}",
    "who do I know that works at {client}",
    "what do we run {project} on",
    "any travel plans involving {city}",
    "what happened with {client} last time",
    "do I have notes about {tool}",
    "how did the {team} people decide on tooling",
    "what broke in {env} recently",
    "background on the {topic} system",
    "is there anything I learned about {db}",
    "what is {first} like to work with",
)
_LEADS = ("", "", "remind me: ", "do you know ", "what do you have on ", "quick question, ", "context for ")


@dataclass(frozen=True, slots=True)
class CorpusMemory:
    content: str
    type: str
    platform: str
    #: The time the memory is about (events and notes), or None for "now".
    occurred_at: datetime | None


class Corpus:
    """Memories and queries from one seed. ``now`` anchors event and note times."""

    def __init__(self, seed: int, now: datetime) -> None:
        self.seed = seed
        self.now = now
        self._memories: list[CorpusMemory] = []
        self._texts: set[str] = set()
        self._queries: set[str] = set()

    def memories(self, stop: int, start: int = 0) -> list[CorpusMemory]:
        """Memories ``start`` to ``stop`` (exclusive); the same for every call with this seed."""
        while len(self._memories) < stop:
            self._memories.append(self._make(len(self._memories)))
        return self._memories[start:stop]

    def only(
        self, n: int, types: tuple[str, ...], *, salt: str, within_days: int = SPREAD_DAYS
    ) -> list[CorpusMemory]:
        """``n`` memories of the given types from their own random stream, none repeating a text made before."""
        rng = random.Random(f"{self.seed}:{salt}")
        out: list[CorpusMemory] = []
        while len(out) < n:
            mtype = types[len(out) % len(types)]
            out.append(self._memory_of(rng, mtype, within_days))
        return out

    def queries(self, n: int, *, salt: str) -> list[str]:
        """``n`` queries never returned before by this corpus: about half exact, half paraphrase."""
        rng = random.Random(f"{self.seed}:queries:{salt}")
        out: list[str] = []
        misses = 0
        while len(out) < n:
            exact = len(out) % 2 == 0
            template = (
                rng.choice(_EXACT_QUERIES) if exact else rng.choice(_LEADS) + rng.choice(_PARAPHRASE_QUERIES)
            )
            text = self._fill(rng, template)
            if text.casefold() in self._queries:
                misses += 1
                if misses > 100_000:
                    raise RuntimeError("ran out of distinct queries; widen the query templates")
                continue
            self._queries.add(text.casefold())
            out.append(text)
        return out

    def _make(self, index: int) -> CorpusMemory:
        rng = random.Random(f"{self.seed}:memory:{index}")
        mtype = rng.choices(TYPES, weights=_TYPE_WEIGHTS)[0]
        return self._memory_of(rng, mtype, SPREAD_DAYS)

    def _memory_of(self, rng: random.Random, mtype: str, within_days: int) -> CorpusMemory:
        platform = rng.choices(PLATFORMS, weights=_PLATFORM_WEIGHTS)[0]
        occurred: datetime | None = None
        if mtype in ("event", "note"):
            occurred = self.now - timedelta(days=rng.uniform(0.05, within_days))
        for _ in range(1000):
            text = self._fill(rng, rng.choice(_TEMPLATES[mtype]) + rng.choice(_SUFFIXES), occurred)
            if MIN_CHARS <= len(text) <= MAX_CHARS and text.casefold() not in self._texts:
                self._texts.add(text.casefold())
                return CorpusMemory(text, mtype, platform, occurred)
        raise RuntimeError(f"cannot find a new {mtype} text; the vocabulary is too small")

    def _fill(self, rng: random.Random, template: str, when: datetime | None = None) -> str:
        values: dict[str, str] = {}

        def slot(match: re.Match[str]) -> str:
            key = match.group(1)
            if key not in values:
                values[key] = self._slot(rng, key, when, values)
            return values[key]

        return _SLOT.sub(slot, template)

    def _slot(self, rng: random.Random, key: str, when: datetime | None, taken: dict[str, str]) -> str:
        def pick(options: list[str] | tuple[str, ...], twin: str | None = None) -> str:
            avoid = taken.get(twin) if twin else None
            choice = rng.choice(options)
            while choice == avoid:
                choice = rng.choice(options)
            return choice

        simple: dict[str, list[str]] = {
            "first": _FIRST,
            "last": _LAST,
            "city": _CITIES,
            "project": _PROJECTS,
            "client": _CLIENT_LIST,
            "db": _DBS,
            "lang": _LANGS,
            "framework": _FRAMEWORKS,
            "tool": _TOOLS,
            "cloud": _CLOUDS,
            "region": _REGIONS,
            "topic": _TOPICS,
            "team": _TEAMS,
            "role": _ROLES,
            "editor": _EDITORS,
            "theme": _THEMES,
            "font": _FONTS,
            "food": _FOODS,
            "drink": _DRINKS,
            "restaurant": _RESTAURANTS,
            "hobby": _HOBBIES,
            "sport": _SPORTS,
            "meeting": _MEETINGS,
            "conference": _CONFERENCES,
            "feature": _FEATURES,
            "metric": _METRICS,
            "env": _ENVS,
            "os": _OSES,
            "language": _LANGUAGES,
            "allergen": _ALLERGENS,
            "month": _MONTHS,
            "weekday": _WEEKDAYS,
            "quarter": _QUARTERS,
            "skill": _SKILLS,
            "thing": _THINGS,
            "task": _TASKS,
            "reason": _REASONS,
            "column": _COLUMNS,
        }
        base = key.rstrip("2")
        if base in simple:
            return pick(simple[base], base if key.endswith("2") else None)
        if key == "date":
            moment = when or (self.now - timedelta(days=rng.uniform(1, SPREAD_DAYS)))
            return f"{moment.day} {_MONTHS[moment.month - 1]}"
        numbers: dict[str, tuple[int, int]] = {
            "size": (11, 18),
            "width": (80, 120),
            "hour": (7, 11),
            "age": (4, 17),
            "seats": (20, 2000),
            "nodes": (3, 48),
            "rps": (50, 20000),
            "port": (5400, 5499),
            "pct": (1, 40),
            "weeks": (1, 3),
            "guests": (4, 14),
            "rows": (1, 500),
            "minutes": (3, 240),
            "count": (200, 90000),
            "users": (2, 900),
        }
        if key in numbers:
            low, high = numbers[key]
            value = rng.randint(low, high)
            if key == "rows":
                return f"{value} million"
            if key == "users":
                return f"{value},000"
            return str(value)
        if key == "version":
            return f"{rng.randint(1, 17)}.{rng.randint(0, 12)}"
        if key == "indent":
            return rng.choice(["4-space indents", "2-space indents", "tabs"])
        if key == "quotes":
            return rng.choice(["double", "single"])
        if key == "units":
            return rng.choice(["metric", "imperial"])
        raise KeyError(key)


def _main() -> None:
    """Print a sample and the type mix, for eyeballing the corpus."""
    from collections import Counter
    from datetime import UTC

    corpus = Corpus(7, datetime.now(UTC))
    sample = corpus.memories(2000)
    for m in sample[:25]:
        print(f"{m.type:10} {m.platform:8} {len(m.content):3} {m.content}")
    print(Counter(m.type for m in sample))
    lengths = [len(m.content) for m in sample]
    print("chars: min", min(lengths), "max", max(lengths), "mean", sum(lengths) / len(lengths))
    for q in corpus.queries(12, salt="sample"):
        print("query:", q)


if __name__ == "__main__":
    _main()
