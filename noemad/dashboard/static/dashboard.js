// noemad's dashboard: the live parts and the buttons. No framework, no inline script (the CSP forbids it).
// Everything received is shown as text (textContent), never parsed as markup.
"use strict";

function say(text) {
  const box = document.getElementById("announce");
  if (box) box.textContent = text;
}

async function problem(response) {
  try {
    const body = await response.json();
    return body.detail || response.statusText;
  } catch (_) {
    return (await response.text()) || response.statusText;
  }
}

// Buttons with data-method/data-path send that request to /api/v1 with data-body (JSON), as the CLI does.
async function act(button) {
  if (button.dataset.confirm && !window.confirm(button.dataset.confirm)) return;
  const init = { method: button.dataset.method, headers: { "content-type": "application/json" }, credentials: "same-origin" };
  if (button.dataset.body) init.body = button.dataset.body;
  button.disabled = true;
  try {
    const response = await fetch(button.dataset.path, init);
    if (!response.ok) {
      say(`${response.status}: ${await problem(response)}`);
      button.disabled = false;
      return;
    }
    say("done");
    window.location.reload();
  } catch (error) {
    say(`noemad did not answer: ${error}`);
    button.disabled = false;
  }
}

// The event stream (SSE) of a mind, read with fetch so every event kind arrives (EventSource
// hands a script only the kinds it names): each new event prepended as text, the newest 200 kept.
async function follow(list) {
  const show = (data) => {
    let event;
    try { event = JSON.parse(data); } catch (_) { return; }
    if (!event || typeof event.id !== "number") return;
    const item = document.createElement("li");
    const link = document.createElement("a");
    link.href = `/events/${event.id}/timeline`;
    link.textContent = `#${event.id}`;
    item.append(link, ` ${event.kind} · ${event.actor} · ${(event.text || "").slice(0, 100)}`);
    list.prepend(item);
    while (list.children.length > 200) list.lastElementChild.remove();
    if (event.kind === "mode_changed") refreshMode(event);
  };
  try {
    const response = await fetch(list.dataset.stream, { credentials: "same-origin" });
    if (!response.ok || !response.body) return;
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const data = block.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
        if (data && !block.includes("event: end")) show(data);
      }
    }
  } catch (_) { /* the page is closing or noemad stopped */ }
}

function refreshMode(event) {
  const mode = event.data && event.data.to;
  if (!mode) return;
  document.querySelectorAll(`[data-mode="${CSS.escape(event.mind)}"]`).forEach((el) => { el.textContent = mode; });
}

// Running jobs: their progress read from GET /api/v1/jobs/{id} until they end, then the page shows the outcome.
function watch(job) {
  const bar = job.querySelector("progress");
  const state = job.querySelector(".job-state");
  const tick = async () => {
    try {
      const response = await fetch(`/api/v1/jobs/${job.dataset.job}`, { credentials: "same-origin" });
      if (!response.ok) return;
      const data = await response.json();
      bar.value = data.progress;
      const text = `${data.status} · ${data.stage} · ${Math.round(data.progress * 100)}%`;
      bar.textContent = text;
      state.textContent = text;
      if (data.status !== "running") { window.location.reload(); return; }
    } catch (_) { /* noemad restarting: try again */ }
    window.setTimeout(tick, 400);
  };
  tick();
}

// The Minds page: each mind's mode, read again every few seconds (one request, not a stream per mind).
function modes(box) {
  const tick = async () => {
    try {
      const response = await fetch(box.dataset.modes, { credentials: "same-origin" });
      if (response.ok) {
        for (const mind of (await response.json()).minds) {
          box.querySelectorAll(`[data-mode="${CSS.escape(mind.name)}"]`).forEach((el) => { el.textContent = mind.mode; });
        }
      }
    } catch (_) { /* noemad restarting: try again */ }
    window.setTimeout(tick, 3000);
  };
  window.setTimeout(tick, 3000);
}

// Times: stored in UTC, shown as a person reads them — relative to the daemon's now (its clock, manual
// or not, from the status line) when within a day, else the local date and time; the exact local
// time to the second on hover.
function localTime(el) {
  const at = new Date(el.getAttribute("datetime"));
  if (Number.isNaN(at.getTime())) return;
  const status = document.getElementById("daemon-status");
  const now = status && status.dataset.now ? new Date(status.dataset.now) : new Date();
  const seconds = (at.getTime() - now.getTime()) / 1000;
  el.title = at.toLocaleString(undefined, { dateStyle: "full", timeStyle: "long" });
  if (Math.abs(seconds) < 45) {
    el.textContent = "just now";
    return;
  }
  const relative = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
  if (Math.abs(seconds) < 3600) {
    el.textContent = relative.format(Math.round(seconds / 60), "minute");
    return;
  }
  if (Math.abs(seconds) < 86400) {
    el.textContent = relative.format(Math.round(seconds / 3600), "hour");
    return;
  }
  el.textContent = at.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("time[datetime]").forEach(localTime);
  document.querySelectorAll("[data-modes]").forEach(modes);
  document.querySelectorAll("button.action").forEach((b) => b.addEventListener("click", () => act(b)));
  document.querySelectorAll("[data-stream]").forEach(follow);
  document.querySelectorAll("[data-job]").forEach(watch);
});
