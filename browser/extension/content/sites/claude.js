// Claude (claude.ai). When the site's markup changes, only this file changes.
"use strict";

globalThis.talleiSites.claude = {
  platform: "claude",
  name: "Claude",
  // The composer is a ProseMirror contenteditable inside the chat input fieldset.
  composer: () => document.querySelector('fieldset div.ProseMirror[contenteditable="true"], div.ProseMirror[contenteditable="true"]'),
  // The box around the composer, which the chip sits above.
  frame: (el) => el.closest("fieldset") ?? el,
  readDraft: (el) => globalThis.tallei.textOf(el),
  insert: (el, text) => globalThis.tallei.insertAtEnd(el, text),
  sendButton: () => document.querySelector('button[aria-label="Send message"], button[aria-label="Send Message"]'),
  isSendButton: (target) => Boolean(target.closest('button[aria-label="Send message"], button[aria-label="Send Message"]')),
  // Settings → Capabilities → Memory: what Claude keeps about the person, one item a line.
  memoryPage: {
    matches: () => location.pathname.startsWith("/settings"),
    items: () => document.querySelectorAll('[data-testid="memory-item"]'),
    anchor: () => document.querySelector('[data-testid="memory-item"]')?.parentElement ?? null,
  },
};
