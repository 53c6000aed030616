/**
 * Headers and CSRF protection for the sign-in and consent pages. The pages are plain forms: no
 * script runs, nothing may frame them, and a form posted from another site is refused.
 */
import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { randomToken } from "../auth/github-signin";

export const STYLESHEET_PATH = "/oauth/style.css";
// The server's own mark (src/server/icons.ts), so a signed-in tab is recognisable among others.
export const FAVICON_PATH = "/icons/agent-ledger.svg";
const CSRF_COOKIE = "__Host-ledger-csrf";
export const CSRF_FIELD = "csrf";

/**
 * `form-action` also governs where a form's response may redirect (Chromium enforces it), so the
 * pages that end in a redirect to the client or to GitHub name those origins.
 */
export function pageHeaders(formTargets: readonly string[] = []): Record<string, string> {
  const targets = [...new Set(formTargets)].filter((o) => /^https?:\/\/[^\s;,']+$/.test(o));
  return {
    "Content-Security-Policy": [
      "default-src 'none'",
      `style-src 'self'`,
      "img-src 'self'",
      `form-action 'self'${targets.map((t) => ` ${t}`).join("")}`,
      "frame-ancestors 'none'",
      "base-uri 'none'",
    ].join("; "),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    // Not no-referrer: under it Chromium posts the forms with `Origin: null`, which the CSRF check refuses.
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
  };
}

/** The CSRF token for a page's form, set as a `__Host-` cookie the form must echo (double submit). */
export function issueCsrf(c: Context): string {
  const existing = getCookie(c, CSRF_COOKIE);
  const token = existing && /^[A-Za-z0-9_-]{43}$/.test(existing) ? existing : randomToken();
  setCookie(c, CSRF_COOKIE, token, { path: "/", secure: true, httpOnly: true, sameSite: "Lax", maxAge: 3600 });
  return token;
}

function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * Whether a form post is the page's own: the browser's Origin (when it sends one) is this server,
 * and the form echoes the CSRF cookie.
 */
export function csrfOk(c: Context, form: FormData, ownOrigin: string): boolean {
  const origin = c.req.header("Origin");
  if (origin !== undefined && origin !== ownOrigin && origin !== new URL(c.req.url).origin) return false;
  const cookie = getCookie(c, CSRF_COOKIE);
  const field = form.get(CSRF_FIELD);
  return typeof cookie === "string" && cookie.length > 0 && typeof field === "string" && sameText(cookie, field);
}

export const STYLESHEET = `
:root { color-scheme: light dark; font-family: system-ui, sans-serif; line-height: 1.5; }
body { margin: 0; padding: 2rem 1rem; display: flex; justify-content: center; }
main { max-width: 34rem; width: 100%; }
h1 { font-size: 1.4rem; margin: 0 0 1rem; }
h2 { font-size: 1.05rem; margin: 1.5rem 0 .5rem; }
section, fieldset { border: 1px solid #8884; border-radius: .5rem; padding: 1rem; margin: 1rem 0; }
label { display: block; margin: .4rem 0; }
input[type=password] { width: 100%; box-sizing: border-box; padding: .5rem; font: inherit; }
button { font: inherit; padding: .5rem 1rem; border-radius: .4rem; border: 1px solid #8888; cursor: pointer; }
button.primary { background: #1f6feb; color: #fff; border-color: #1f6feb; }
.warning { border-left: 4px solid #d29922; padding-left: .75rem; }
.error { border-left: 4px solid #f85149; padding-left: .75rem; }
.muted { opacity: .75; font-size: .9rem; }
code { font-size: .9em; }
ul { padding-left: 1.2rem; }
`;
