// Runs this page's site adapter: recall while the person writes, the block on Tab or on send,
// optional capture of the person's own statements, Remember this, and import from the memory page.
"use strict";

(() => {
  const site = Object.values(globalThis.talleiSites)[0];
  if (!site || globalThis.talleiRunning) return;
  globalThis.talleiRunning = true;
  const T = globalThis.tallei;
  const S = globalThis.talleiShared;
  const DEBOUNCE_MS = 600;

  let settings = { ...S.DEFAULTS };
  S.loadSettings().then((all) => (settings = all[site.platform]));
  chrome.storage.onChanged.addListener((changes, area) => {
    if (area !== "local" || !changes.sites) return;
    settings = { ...S.DEFAULTS, ...((changes.sites.newValue || {})[site.platform] || {}) };
    if (settings.mode === "never") chip.hide();
  });

  let composer = null;
  let timer = 0;
  let look = null; // the last recall: { draft, block, count } for the person's own text
  let lookSeq = 0;
  let resending = false;
  let lastSent = { text: "", at: 0 };
  const chip = T.createChip(() => addBlock());

  function findComposer() {
    if (!composer || !composer.isConnected) composer = site.composer();
    return composer;
  }

  function frameOf(el) {
    return el && site.frame ? site.frame(el) : el;
  }

  function inComposer(target) {
    // Most keys on a page land in the composer; anything that is not an editor is turned away first.
    if (!(target instanceof HTMLElement) || !(target.isContentEditable || target instanceof HTMLTextAreaElement)) {
      return false;
    }
    const el = composer && composer.isConnected ? composer : findComposer();
    return el !== null && el.contains(target);
  }

  // The whole cost of a keystroke: is it in the composer, and note the time. One timer runs while the
  // person types and moves itself on until they pause, instead of a new timer for every key.
  let lastInputAt = 0;
  function onInput(event) {
    if (!inComposer(event.target)) return;
    lastInputAt = performance.now();
    if (!timer) timer = setTimeout(settle, DEBOUNCE_MS);
  }

  function settle() {
    const wait = lastInputAt + DEBOUNCE_MS - performance.now();
    if (wait > 1) {
      timer = setTimeout(settle, wait);
      return;
    }
    timer = 0;
    lookUp();
  }

  function stopTimer() {
    clearTimeout(timer);
    timer = 0;
  }

  function plural(n) {
    return n === 1 ? "1 memory" : `${n} memories`;
  }

  function showNotice(error) {
    if (error.code === "paused") chip.show(`Tallei is paused for ${site.name}`, { kind: "notice", near: frameOf(composer) });
    else if (error.code === "locked") chip.show("Tallei is locked", { kind: "notice", near: frameOf(composer) });
    else chip.hide();
  }

  async function lookUp() {
    const el = findComposer();
    if (!el || settings.mode === "never") return chip.hide();
    const raw = site.readDraft(el);
    const draft = S.stripBlock(raw);
    if (!draft) {
      look = null;
      return chip.hide();
    }
    if (T.hasBlock(raw)) return chip.show("Memory added", { kind: "done", near: frameOf(el) });
    const seq = ++lookSeq;
    const reply = await T.ask({ type: "recall", draft: draft.slice(0, 8000), use: false });
    if (seq !== lookSeq) return; // a newer look is on its way
    if (!reply.ok) {
      look = null;
      return showNotice(reply.error);
    }
    look = { draft, block: reply.block, count: reply.count };
    if (reply.count === 0) return chip.hide();
    if (settings.mode === "always") chip.show(`${plural(reply.count)} · added when you send`, { near: frameOf(el) });
    else chip.show(`${plural(reply.count)} ${reply.count === 1 ? "applies" : "apply"}`, { tab: true, near: frameOf(el) });
  }

  /** Add the looked-up block to the draft once, and tell Tallei it was used. */
  function addBlock() {
    const el = findComposer();
    if (!el || !look || look.count === 0) return false;
    if (T.hasBlock(site.readDraft(el))) return false;
    site.insert(el, T.wrapBlock(look.block));
    T.ask({ type: "recall", draft: look.draft.slice(0, 8000), use: true });
    chip.show("Memory added", { kind: "done", near: frameOf(el) });
    return true;
  }

  function onKeyDown(event) {
    if (event.key === "Tab") {
      if (event.shiftKey || event.altKey || event.ctrlKey || event.metaKey || event.isComposing) return;
      if (settings.mode !== "ask" || chip.kind !== "count" || !look || !inComposer(event.target)) return;
      if (!S.stripBlock(site.readDraft(composer)) || !T.caretAtEnd(composer)) return;
      event.preventDefault();
      event.stopImmediatePropagation();
      addBlock();
    } else if (event.key === "Enter") {
      if (event.shiftKey || event.altKey || event.ctrlKey || event.metaKey || event.isComposing) return;
      if (inComposer(event.target)) beforeSend(event);
    }
  }

  function onClick(event) {
    if (event.target instanceof Element && site.isSendButton(event.target)) beforeSend(event);
  }

  function beforeSend(event) {
    if (resending) {
      resending = false;
      return;
    }
    const el = findComposer();
    if (!el) return;
    const raw = site.readDraft(el);
    const own = S.stripBlock(raw);
    if (!own) return;
    stopTimer();
    lookSeq++;
    if (settings.mode === "always" && !T.hasBlock(raw)) {
      if (look && look.draft === own) {
        if (look.count > 0) addBlock();
      } else {
        // No look for this exact text yet: hold the message, fetch its memories, then send it.
        event.preventDefault();
        event.stopImmediatePropagation();
        T.ask({ type: "recall", draft: own.slice(0, 8000), use: false }).then((reply) => {
          look = reply.ok ? { draft: own, block: reply.block, count: reply.count } : null;
          if (look && look.count > 0) addBlock();
          resending = true;
          submit(el);
          sent(own);
        });
        return;
      }
    }
    sent(own);
  }

  function submit(el) {
    const button = site.sendButton();
    if (button) button.click();
    else el.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", code: "Enter", bubbles: true, cancelable: true }));
  }

  function sent(own) {
    const now = Date.now();
    if (own === lastSent.text && now - lastSent.at < 2000) return; // one send seen twice (key, then button)
    lastSent = { text: own, at: now };
    look = null;
    chip.hide();
    // Only the person's own words, never the block: the background checks the capture setting again.
    if (settings.capture) chrome.runtime.sendMessage({ kind: "capture", text: own.slice(0, 4000) });
  }

  let onInputHandler = onInput;
  let onKeyDownHandler = onKeyDown;
  if (document.documentElement.hasAttribute("data-tallei-bench")) {
    // A measuring page asks for the time each handler took: nothing is kept otherwise.
    const times = { input: [], keydown: [] };
    const timed = (fn, into) => (event) => {
      const t0 = performance.now();
      fn(event);
      into.push(performance.now() - t0);
    };
    onInputHandler = timed(onInput, times.input);
    onKeyDownHandler = timed(onKeyDown, times.keydown);
    document.addEventListener("tallei-bench-report", () => {
      document.documentElement.dataset.talleiBenchResult = JSON.stringify(times);
    });
  }
  window.addEventListener("input", onInputHandler, true);
  window.addEventListener("keydown", onKeyDownHandler, true);
  window.addEventListener("click", onClick, true);

  function selectedText() {
    return S.stripBlock(String(window.getSelection() || ""));
  }

  chrome.runtime.onMessage.addListener((message, _sender, sendResponse) => {
    if (message.kind === "selection") sendResponse({ text: selectedText() });
    else if (message.kind === "draft") {
      const el = findComposer();
      sendResponse({ draft: el ? S.stripBlock(site.readDraft(el)) : "" });
    } else if (message.kind === "notice") {
      chip.show(message.text, { kind: message.tone || "notice", near: frameOf(findComposer()) });
      setTimeout(() => chip.kind === (message.tone || "notice") && chip.hide(), 4000);
    }
  });

  // The site's own memory page: one button imports what it lists.
  let importButton = null;
  function checkMemoryPage() {
    const page = site.memoryPage;
    const items = page && page.matches() ? [...page.items()] : [];
    const texts = items.map((n) => n.textContent.trim()).filter((t) => t.length > 0);
    if (texts.length === 0) {
      if (importButton) importButton.host.hidden = true;
      return;
    }
    if (!importButton) importButton = T.createChip(importNow);
    if (importButton.kind === null || importButton.kind === "count") {
      importButton.show(`Import ${texts.length === 1 ? "this memory" : `these ${texts.length} memories`} into Tallei`, {
        near: page.anchor(),
      });
    }
    importButton.host.dataset.role = "import";
  }

  async function importNow() {
    const page = site.memoryPage;
    const texts = [...page.items()]
      .map((n) => n.textContent.trim())
      .filter((t) => t.length > 0 && t.length <= 4000)
      .slice(0, 500);
    if (texts.length === 0) return;
    importButton.show("Importing…", { kind: "busy", near: page.anchor() });
    const reply = await T.ask({ type: "import", items: texts });
    if (!reply.ok) return importButton.show(reply.error.message, { kind: "notice", near: page.anchor() });
    const known = reply.confirmed + reply.skipped;
    importButton.show(`Imported ${reply.added} into Tallei${known ? `, ${known} already there` : ""}`, {
      kind: "done",
      near: page.anchor(),
    });
  }

  if (site.memoryPage) {
    checkMemoryPage();
    setInterval(checkMemoryPage, 1500);
  }
})();
