// Shared by every site's content script: the memory block's markers, the chip, messaging.
// Site adapters register themselves in globalThis.talleiSites; content/main.js runs the one for this page.
"use strict";

globalThis.talleiSites = globalThis.talleiSites || {};

globalThis.tallei = (() => {
  const { OPEN, CLOSE, stripBlock } = globalThis.talleiShared;

  function hasBlock(text) {
    return text.includes(OPEN);
  }

  function wrapBlock(block) {
    return `\n\n${OPEN}\n${block.trim()}\n${CLOSE}`;
  }

  /** Ask the background for a native request; it adds the platform from this tab's address. */
  function ask(request) {
    return new Promise((resolve) => {
      try {
        chrome.runtime.sendMessage({ kind: "native", request }, (reply) => {
          if (chrome.runtime.lastError || !reply) {
            resolve({ ok: false, error: { code: "not_connected", message: "Tallei could not be reached." } });
          } else {
            resolve(reply);
          }
        });
      } catch (_err) {
        // The extension was reloaded under this page: this copy of the script is orphaned.
        resolve({ ok: false, error: { code: "not_connected", message: "Reload this page to use Tallei." } });
      }
    });
  }

  /** Put the caret at the end of a contenteditable element and insert text there, as typing would. */
  function insertAtEnd(el, text) {
    el.focus();
    if (el instanceof HTMLTextAreaElement) {
      el.setSelectionRange(el.value.length, el.value.length);
      if (!document.execCommand("insertText", false, text)) el.setRangeText(text, el.value.length, el.value.length, "end");
      el.dispatchEvent(new InputEvent("input", { bubbles: true, inputType: "insertText", data: text }));
      return;
    }
    const sel = window.getSelection();
    const range = document.createRange();
    range.selectNodeContents(el);
    range.collapse(false);
    sel.removeAllRanges();
    sel.addRange(range);
    // A paste is what ProseMirror and Quill 2 turn into their own paragraphs; an editor that does not
    // take it (nothing changed) gets the text typed in instead, through the browser's editing.
    const data = new DataTransfer();
    data.setData("text/plain", text);
    const paste = new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true });
    if (el.dispatchEvent(paste) === false && el.innerText.includes(text.trim().split("\n")[0])) return;
    if (!document.execCommand("insertText", false, text)) {
      el.append(document.createTextNode(text));
      el.dispatchEvent(new InputEvent("input", { bubbles: true, inputType: "insertText", data: text }));
    }
  }

  function caretAtEnd(el) {
    if (el instanceof HTMLTextAreaElement) {
      return el.selectionStart === el.selectionEnd && el.value.slice(el.selectionEnd).trim() === "";
    }
    const sel = window.getSelection();
    if (!sel || sel.rangeCount === 0 || !sel.isCollapsed) return false;
    const r = sel.getRangeAt(0);
    if (!el.contains(r.endContainer)) return false;
    const after = document.createRange();
    after.selectNodeContents(el);
    after.setStart(r.endContainer, r.endOffset);
    return after.toString().trim() === "";
  }

  const SVG = "http://www.w3.org/2000/svg";
  /** The mark: three lines, drawn in the chip's colour. */
  function icon() {
    const svg = document.createElementNS(SVG, "svg");
    for (const [k, v] of Object.entries({ viewBox: "0 0 16 16", width: "14", height: "14", fill: "none",
      stroke: "currentColor", "stroke-width": "1.4", "stroke-linecap": "round", "aria-hidden": "true" })) {
      svg.setAttribute(k, v);
    }
    const path = document.createElementNS(SVG, "path");
    path.setAttribute("d", "M3 4.5h10M3 8h10M3 11.5h6");
    svg.append(path);
    return svg;
  }
  const STYLE = `
    :host { all: initial; position: fixed; z-index: 2147483646; }
    :host([hidden]) { display: none; }
    .chip { display: inline-flex; align-items: center; gap: 6px; box-sizing: border-box; height: 26px;
      padding: 0 10px; border-radius: 13px; border: 1px solid rgba(60, 64, 67, 0.18);
      background: rgba(255, 255, 255, 0.96); color: #3c4043; box-shadow: 0 1px 3px rgba(0, 0, 0, 0.08);
      font: 12px/1 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; cursor: pointer;
      white-space: nowrap; user-select: none; }
    .chip:hover { border-color: rgba(26, 115, 110, 0.55); }
    .chip svg { color: #1a736e; flex: none; }
    .key { padding: 2px 5px; border-radius: 4px; background: #eef1f1; color: #5f6368; font-size: 11px; }
    .chip.notice { cursor: default; }
    .chip.notice svg { color: #8a6d1f; }
    .chip.done svg { color: #1a736e; }
  `;

  /** A small pill beside the composer, in a shadow root so the site's styles never reach it. */
  function createChip(onClick) {
    const host = document.createElement("tallei-chip");
    host.hidden = true;
    const root = host.attachShadow({ mode: "open" });
    const style = document.createElement("style");
    style.textContent = STYLE;
    const chip = document.createElement("div");
    chip.className = "chip";
    chip.setAttribute("role", "button");
    const label = document.createElement("span");
    label.className = "text";
    const key = document.createElement("span");
    key.className = "key";
    key.textContent = "Tab";
    key.hidden = true;
    chip.append(icon(), label, key);
    root.append(style, chip);
    chip.addEventListener("mousedown", (e) => e.preventDefault()); // keep the caret in the composer
    chip.addEventListener("click", () => onClick());
    document.documentElement.append(host);
    let anchor = null;
    function place() {
      if (host.hidden) return;
      const w = chip.offsetWidth;
      if (!anchor || !anchor.isConnected) {
        host.style.left = `${Math.max(4, window.innerWidth - w - 16)}px`;
        host.style.top = `${Math.max(4, window.innerHeight - 48)}px`;
        return;
      }
      const r = anchor.getBoundingClientRect();
      host.style.left = `${Math.max(4, r.right - w)}px`;
      host.style.top = `${Math.max(4, r.top - 32)}px`;
    }
    let queued = false;
    const replace = () => {
      if (queued) return;
      queued = true;
      requestAnimationFrame(() => {
        queued = false;
        place();
      });
    };
    window.addEventListener("resize", replace, { passive: true });
    window.addEventListener("scroll", replace, { passive: true, capture: true });
    return {
      host,
      show(text, { kind = "count", tab = false, near = null } = {}) {
        anchor = near || anchor;
        label.textContent = text;
        key.hidden = !tab;
        chip.className = `chip ${kind}`;
        host.dataset.kind = kind;
        host.hidden = false;
        place();
      },
      hide() {
        host.hidden = true;
        delete host.dataset.kind;
      },
      get visible() {
        return !host.hidden;
      },
      get kind() {
        return host.hidden ? null : host.dataset.kind;
      },
    };
  }

  /** The text in a composer: a textarea's value, or what a contenteditable editor shows. */
  function textOf(el) {
    return el instanceof HTMLTextAreaElement ? el.value : el.innerText;
  }

  return { textOf, OPEN, CLOSE, stripBlock, hasBlock, wrapBlock, ask, insertAtEnd, caretAtEnd, createChip };
})();
