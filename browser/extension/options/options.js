"use strict";

const S = globalThis.talleiShared;

async function start() {
  const settings = await S.loadSettings();
  const rows = Object.entries(S.SITES).map(([platform, site]) => {
    const tr = document.createElement("tr");
    const name = document.createElement("td");
    name.textContent = site.name;
    const mode = document.createElement("select");
    mode.id = `mode-${platform}`;
    for (const [value, label] of Object.entries(S.MODES)) {
      mode.append(new Option(label, value, false, value === settings[platform].mode));
    }
    mode.addEventListener("change", () => S.saveSiteSettings(platform, { mode: mode.value }));
    const capture = document.createElement("input");
    capture.type = "checkbox";
    capture.id = `capture-${platform}`;
    capture.checked = settings[platform].capture;
    capture.setAttribute("aria-label", `Save my statements on ${site.name}`);
    capture.addEventListener("change", () => S.saveSiteSettings(platform, { capture: capture.checked }));
    const modeCell = document.createElement("td");
    modeCell.append(mode);
    const captureCell = document.createElement("td");
    captureCell.append(capture);
    tr.append(name, modeCell, captureCell);
    return tr;
  });
  document.getElementById("sites").replaceChildren(...rows);
}

start();
