// Shared by the background, the popup, the options page and the content scripts.
"use strict";

globalThis.talleiShared = (() => {
  const SITES = {
    chatgpt: { name: "ChatGPT", origins: ["https://chatgpt.com/", "https://chat.openai.com/"] },
    claude: { name: "Claude", origins: ["https://claude.ai/"] },
    gemini: { name: "Gemini", origins: ["https://gemini.google.com/"] },
  };
  const DEFAULTS = { mode: "ask", capture: false };
  const MODES = { ask: "Ask each time", always: "Always add when sending", never: "Never" };

  /** The platform a page belongs to, or null for any other address. */
  function platformOf(url) {
    if (typeof url !== "string") return null;
    for (const [platform, site] of Object.entries(SITES)) {
      if (site.origins.some((origin) => url.startsWith(origin))) return platform;
    }
    return null;
  }

  const OPEN = "[Tallei memory]";
  const CLOSE = "[/Tallei memory]";
  // A block runs from its opening line to its closing line, or to the end when the closing line was lost.
  const BLOCK_RE = /\n*\[Tallei memory\][\s\S]*?(?:\[\/Tallei memory\]|$)\n*/g;

  /** The text the person wrote, without any block Tallei added. */
  function stripBlock(text) {
    return String(text).replace(BLOCK_RE, "\n").replace(/\u00a0/g, " ").trim();
  }

  async function loadSettings() {
    const { sites = {} } = await chrome.storage.local.get("sites");
    const out = {};
    for (const platform of Object.keys(SITES)) out[platform] = { ...DEFAULTS, ...(sites[platform] || {}) };
    return out;
  }

  async function saveSiteSettings(platform, patch) {
    const { sites = {} } = await chrome.storage.local.get("sites");
    sites[platform] = { ...DEFAULTS, ...(sites[platform] || {}), ...patch };
    await chrome.storage.local.set({ sites });
  }

  return { SITES, DEFAULTS, MODES, platformOf, OPEN, CLOSE, stripBlock, loadSettings, saveSiteSettings };
})();
