// ChatGPT (chatgpt.com, chat.openai.com). When the site's markup changes, only this file changes.
"use strict";

globalThis.talleiSites.chatgpt = {
  platform: "chatgpt",
  name: "ChatGPT",
  // The composer is a ProseMirror editor on a div with this id (a textarea on very old pages).
  composer: () => document.querySelector("#prompt-textarea"),
  // The box around the composer, which the chip sits above.
  frame: (el) => el.closest("form") ?? el,
  readDraft: (el) => globalThis.tallei.textOf(el),
  insert: (el, text) => globalThis.tallei.insertAtEnd(el, text),
  sendButton: () => document.querySelector('button[data-testid="send-button"], button#composer-submit-button'),
  isSendButton: (target) => Boolean(target.closest('button[data-testid="send-button"], button#composer-submit-button')),
  // Settings → Personalization → Manage memories: a dialog listing each saved memory as a table row.
  memoryPage: {
    matches: () => location.hash.toLowerCase().startsWith("#settings/personalization"),
    items: () => document.querySelectorAll('[role="dialog"] table tbody tr td:first-child'),
    anchor: () => document.querySelector('[role="dialog"] table'),
  },
};
