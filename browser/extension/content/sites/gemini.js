// Gemini (gemini.google.com). When the site's markup changes, only this file changes.
"use strict";

globalThis.talleiSites.gemini = {
  platform: "gemini",
  name: "Gemini",
  // The composer is a Quill editor inside the rich-textarea element.
  composer: () => document.querySelector('rich-textarea .ql-editor[contenteditable="true"]'),
  // The box around the composer, which the chip sits above.
  frame: (el) => el.closest(".input-area, input-area-v2, fieldset") ?? el.closest("rich-textarea") ?? el,
  readDraft: (el) => globalThis.tallei.textOf(el),
  insert: (el, text) => globalThis.tallei.insertAtEnd(el, text),
  sendButton: () => document.querySelector('button.send-button, button[aria-label="Send message"]'),
  isSendButton: (target) => Boolean(target.closest('button.send-button, button[aria-label="Send message"]')),
  // Settings → Saved info: what the person asked Gemini to keep, one entry each.
  memoryPage: {
    matches: () => location.pathname.startsWith("/saved-info"),
    items: () => document.querySelectorAll("saved-info-item .saved-info-text, [data-test-id='saved-info-text']"),
    anchor: () => document.querySelector("saved-info-item")?.parentElement ?? null,
  },
};
