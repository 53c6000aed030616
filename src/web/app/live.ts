/**
 * The dashboard's one script, progressive enhancement only: every element marked
 * `data-live="<path>"` is refreshed from that path (server-rendered, escaped HTML of the same
 * component) every few seconds while the tab is visible. Without script every page is complete, and
 * a reload shows the same. Served from /app/live.js, so the policy needs no inline script.
 */
export const LIVE_SCRIPT_PATH = "/app/live.js";

export const LIVE_SCRIPT = `"use strict";
(() => {
  const parts = Array.from(document.querySelectorAll("[data-live]"));
  if (!parts.length) return;
  const every = Number(document.body.dataset.liveMs || 5000);
  const refresh = async () => {
    if (document.hidden) return;
    for (const el of parts) {
      try {
        const res = await fetch(el.dataset.live, { credentials: "same-origin", headers: { Accept: "text/html" } });
        if (!res.ok) continue;
        const html = await res.text();
        if (html !== el.innerHTML) el.innerHTML = html;
      } catch (_) {
        // A missed refresh is caught up by the next one.
      }
    }
  };
  setInterval(refresh, every);
})();
`;
