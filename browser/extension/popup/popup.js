"use strict";

const S = globalThis.talleiShared;
const $ = (id) => document.getElementById(id);

function ask(request) {
  return chrome.runtime.sendMessage({ kind: "native", request });
}

/** One plain line, with `command` spans shown as code. */
function say(text, problem = false) {
  const status = $("status");
  status.replaceChildren(
    ...String(text)
      .split("`")
      .map((part, i) => {
        if (i % 2 === 0) return document.createTextNode(part);
        const code = document.createElement("code");
        code.textContent = part;
        return code;
      })
  );
  status.classList.toggle("problem", problem);
}

function item(text, meta) {
  const li = document.createElement("li");
  li.textContent = text;
  if (meta) {
    const span = document.createElement("span");
    span.className = "meta";
    span.textContent = meta;
    li.append(span);
  }
  return li;
}

function empty(list, text) {
  const li = item(text);
  li.className = "empty";
  list.replaceChildren(li);
}

function day(iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? "" : d.toLocaleDateString(undefined, { day: "numeric", month: "short", year: "numeric" });
}

async function currentTab() {
  const wanted = new URLSearchParams(location.search).get("tab");
  if (wanted) return chrome.tabs.get(Number(wanted));
  const [tab] = await chrome.tabs.query({ active: true, currentWindow: true });
  return tab;
}

let platform = null;
let paused = false;
let tab = null;

function showPaused() {
  const name = S.SITES[platform].name;
  $("pause").textContent = paused ? `Resume ${name}` : `Pause ${name}`;
  if (paused) say(`Paused: ${name} cannot use or save memories in Tallei.`, true);
}

async function refreshStatus() {
  const reply = await ask({ type: "status" });
  if (!reply.ok) {
    say(reply.error.message, true);
    document.body.dataset.state = reply.error.code;
    return false;
  }
  document.body.dataset.state = "connected";
  const n = reply.memories;
  say(`Connected · ${n === 1 ? "1 memory" : `${n.toLocaleString()} memories`}`);
  if (platform) {
    paused = reply.paused.includes(platform);
    showPaused();
  }
  return true;
}

async function refreshRecent() {
  const list = $("recent");
  const reply = await ask({ type: "recent", platform, limit: 5 });
  if (!reply.ok) return empty(list, reply.error.message);
  if (reply.memories.length === 0) return empty(list, `Nothing saved from ${S.SITES[platform].name} yet.`);
  list.replaceChildren(...reply.memories.map((m) => item(m.content, `${m.type} · ${day(m.date)}`)));
}

let searchTimer = 0;
async function search() {
  const query = $("query").value.trim();
  const list = $("hits");
  if (!query) return list.replaceChildren();
  const reply = await ask({ type: "search", query: query.slice(0, 1000), limit: 10 });
  if (query !== $("query").value.trim()) return;
  if (!reply.ok) return empty(list, reply.error.message);
  if (reply.hits.length === 0) return empty(list, "No memory matches that.");
  list.replaceChildren(...reply.hits.map((h) => item(h.content, `${h.type} · ${h.platforms.join(", ")} · ${day(h.date)}`)));
}

let block = "";
async function getBlock() {
  const draft = $("draft").value.trim();
  const out = $("block");
  if (!draft) return;
  const reply = await ask({ type: "recall", platform, draft: draft.slice(0, 8000), use: false });
  out.hidden = false;
  if (!reply.ok) {
    block = "";
    out.textContent = reply.error.message;
  } else if (reply.count === 0) {
    block = "";
    out.textContent = "No memory applies to this.";
  } else {
    block = `${S.OPEN}\n${reply.block.trim()}\n${S.CLOSE}`;
    out.textContent = block;
  }
  $("copy").disabled = !block;
}

async function copyBlock() {
  if (!block) return;
  await navigator.clipboard.writeText(block);
  ask({ type: "recall", platform, draft: $("draft").value.trim().slice(0, 8000), use: true });
  $("copy").textContent = "Copied";
}

async function start() {
  tab = await currentTab().catch(() => null);
  platform = S.platformOf(tab && tab.url);
  if (platform) {
    const site = S.SITES[platform];
    $("site").hidden = false;
    $("recall").hidden = false;
    $("site-name").textContent = `On ${site.name}`;
    const settings = (await S.loadSettings())[platform];
    const mode = $("mode");
    for (const [value, label] of Object.entries(S.MODES)) mode.append(new Option(label, value, false, value === settings.mode));
    mode.addEventListener("change", () => S.saveSiteSettings(platform, { mode: mode.value }));
    $("capture").checked = settings.capture;
    $("capture").addEventListener("change", (e) => S.saveSiteSettings(platform, { capture: e.target.checked }));
    $("pause").addEventListener("click", async () => {
      const reply = await ask({ type: "pause", platform, paused: !paused });
      if (!reply.ok) return say(reply.error.message, true);
      paused = reply.paused.includes(platform);
      if (!paused) await refreshStatus();
      showPaused();
      refreshRecent();
    });
    chrome.tabs
      .sendMessage(tab.id, { kind: "draft" })
      .then((reply) => {
        if (reply && reply.draft && !$("draft").value) $("draft").value = reply.draft;
      })
      .catch(() => {});
  }
  $("search-form").addEventListener("submit", (e) => {
    e.preventDefault();
    search();
  });
  $("query").addEventListener("input", () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(search, 250);
  });
  $("get-block").addEventListener("click", getBlock);
  $("copy").addEventListener("click", copyBlock);
  $("open-app").addEventListener("click", async () => {
    const reply = await ask({ type: "open_app" });
    if (!reply.ok) say(reply.error.message, true);
    else say(reply.started ? "Opening Tallei…" : "Tallei is already open.");
  });
  if ((await refreshStatus()) && platform) await refreshRecent();
  document.body.dataset.ready = "true";
}

start();
