// One long-lived native port to Tallei, shared by the content scripts, the popup and the options page.
"use strict";

if (typeof importScripts === "function" && !globalThis.talleiShared) importScripts("shared.js");

const S = globalThis.talleiShared;
const HOST = "app.tallei.desktop";
const TIMEOUT_MS = 30000;
const IS_FIREFOX = typeof browser !== "undefined" && typeof browser.runtime.getBrowserInfo === "function";
/** The name `tallei-desktop connect` knows this browser by: each keeps its host manifests apart. */
function browserName() {
  if (IS_FIREFOX) return "firefox";
  const brands = ((navigator.userAgentData && navigator.userAgentData.brands) || []).map((b) => b.brand);
  if (brands.includes("Microsoft Edge")) return "edge";
  if (brands.includes("Brave")) return "brave";
  if (brands.includes("Google Chrome")) return "chrome";
  return brands.includes("Chromium") ? "chromium" : "chrome";
}
const NOT_INSTALLED =
  `Tallei is not connected to this browser: run \`tallei-desktop connect ${browserName()}\`` +
  " (or use the Assistants page of the Tallei app).";
// What a site's page may ask for; the platform always comes from the tab's address, never the page.
const CONTENT_TYPES = new Set(["recall", "import"]);
const PLATFORM_TYPES = new Set(["recall", "save", "recent", "pause", "import"]);
// Asked again on a fresh port when the host goes away before answering: asking twice changes nothing.
const LOOKS = new Set(["status", "search", "recent", "classify"]);

let port = null;
let nextId = 1;
const pending = new Map();

function failure(code, message) {
  return { ok: false, error: { code, message } };
}

function disconnectError(why) {
  if (/not found|no such native application|forbidden|access.*denied/i.test(why)) {
    return { code: "not_installed", message: NOT_INSTALLED };
  }
  return { code: "not_connected", message: `Tallei stopped answering${why ? ` (${why})` : ""}; try again.` };
}

function connect() {
  if (port) return port;
  const p = (globalThis.browser || chrome).runtime.connectNative(HOST);
  p.onMessage.addListener((message) => {
    const waiting = pending.get(message.id);
    if (!waiting) return;
    pending.delete(message.id);
    clearTimeout(waiting.timer);
    waiting.resolve(message);
  });
  p.onDisconnect.addListener(() => {
    // Chromium says why in lastError, Firefox in the port's error.
    const why = (chrome.runtime.lastError && chrome.runtime.lastError.message) || (p.error && p.error.message) || "";
    if (port === p) port = null;
    const error = disconnectError(why);
    const waiting = [...pending.entries()];
    pending.clear();
    for (const [id, w] of waiting) {
      clearTimeout(w.timer);
      if (w.again && error.code === "not_connected") w.again().then(w.resolve);
      else w.resolve({ id, ok: false, error });
    }
  });
  port = p;
  return p;
}

function isLook(type, fields) {
  return LOOKS.has(type) || (type === "recall" && !fields.use);
}

/** Send one request to the host; always resolves, to a reply or to an error reply. */
function request(type, fields = {}, retried = false) {
  return new Promise((resolve) => {
    const id = nextId++;
    let p;
    try {
      p = connect();
    } catch (err) {
      resolve({ id, ...failure(disconnectError(String(err && err.message)).code, NOT_INSTALLED) });
      return;
    }
    const timer = setTimeout(() => {
      pending.delete(id);
      resolve({ id, ...failure("timeout", "Tallei did not answer in time; try again.") });
    }, TIMEOUT_MS);
    const again = !retried && isLook(type, fields) ? () => request(type, fields, true) : null;
    pending.set(id, { resolve, timer, again });
    try {
      p.postMessage({ ...fields, id, type });
    } catch (err) {
      pending.delete(id);
      clearTimeout(timer);
      port = null;
      resolve({ id, ok: false, error: disconnectError(String(err && err.message)) });
    }
  });
}

function isExtensionPage(sender) {
  return typeof sender.url === "string" && sender.url.startsWith(chrome.runtime.getURL(""));
}

async function handle(message, sender) {
  const fromExtension = isExtensionPage(sender);
  const platform = fromExtension ? null : S.platformOf(sender.tab && sender.tab.url);
  if (!fromExtension && !platform) return failure("invalid", "Tallei works only on ChatGPT, Claude and Gemini.");
  if (message.kind === "native") {
    const { type, ...fields } = message.request || {};
    if (!fromExtension) {
      if (!CONTENT_TYPES.has(type)) return failure("invalid", "A page may not ask Tallei for that.");
      if (PLATFORM_TYPES.has(type)) fields.platform = platform;
    }
    return request(type, fields);
  }
  if (message.kind === "capture" && platform) return capture(platform, message.text);
  return failure("invalid", "Unknown message.");
}

/** Save the person's own sent message when capture is on for that site and it states something worth keeping. */
async function capture(platform, text) {
  const settings = (await S.loadSettings())[platform];
  const own = S.stripBlock(text || "");
  if (!settings.capture || !own || own.length > 4000) return { ok: true, saved: false };
  const verdict = await request("classify", { text: own });
  if (!verdict.ok || !verdict.worth_keeping) return { ok: true, saved: false };
  const saved = await request("save", { platform, content: own, source: "capture", memory_type: verdict.type });
  return saved.ok ? { ...saved, saved: true } : saved;
}

function notify(tab, text, tone) {
  chrome.tabs.sendMessage(tab.id, { kind: "notice", text, tone }).catch(() => {});
}

/** Remember this: save the selection in a site's tab under that site's platform. */
async function rememberFromTab(tab, fallbackText = "") {
  const platform = S.platformOf(tab && tab.url);
  if (!platform) return failure("invalid", "Tallei remembers selections on ChatGPT, Claude and Gemini.");
  let text = "";
  try {
    const reply = await chrome.tabs.sendMessage(tab.id, { kind: "selection" });
    text = (reply && reply.text) || "";
  } catch (_err) {
    // The page has no content script (still loading): the menu's own copy of the selection will do.
  }
  text = S.stripBlock(text || fallbackText);
  if (!text) {
    notify(tab, "Select some text first, then choose Remember this.", "notice");
    return failure("invalid", "Nothing is selected.");
  }
  if (text.length > 4000) {
    notify(tab, "That selection is too long to remember: keep it under 4,000 characters.", "notice");
    return failure("invalid", "The selection is over 4,000 characters.");
  }
  const reply = await request("save", { platform, content: text, source: "selection" });
  if (reply.ok) notify(tab, reply.confirmed_existing ? "Tallei already knew this" : "Saved to Tallei", "done");
  else notify(tab, reply.error.message, "notice");
  return reply;
}

const MENU_ID = "tallei-remember";
chrome.runtime.onInstalled.addListener(() => {
  chrome.contextMenus.create({
    id: MENU_ID,
    title: "Remember this in Tallei",
    contexts: ["selection"],
    documentUrlPatterns: Object.values(S.SITES).flatMap((site) => site.origins.map((o) => `${o}*`)),
  });
});
chrome.contextMenus.onClicked.addListener((info, tab) => {
  if (info.menuItemId === MENU_ID) rememberFromTab(tab, info.selectionText || "");
});

async function onCommand(name, tab) {
  if (name !== "remember-selection") return null;
  const target = tab || (await chrome.tabs.query({ active: true, currentWindow: true }))[0];
  return rememberFromTab(target);
}
chrome.commands.onCommand.addListener((name, tab) => onCommand(name, tab));

chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
  handle(message, sender).then(sendResponse);
  return true;
});

// For the extension's own tests, which drive these handlers the way the menu and the shortcut do.
globalThis.talleiBackground = { request, rememberFromTab, onCommand };
