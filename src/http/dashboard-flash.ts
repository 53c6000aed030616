/**
 * The outcome of a dashboard form, carried across its Post/Redirect/Get: a short-lived `__Host-`
 * cookie the next page reads once and clears, so the page after the redirect says what happened
 * (an error envelope's message and hint included) without putting that text in the URL, where a
 * link could forge it.
 */
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { Flash } from "../web/app/layout";

const FLASH_COOKIE = "__Host-ledger-flash";
// A cookie holds about 4 KB; the message and hint are cut well inside it.
const MESSAGE_MAX = 400;
const HINT_MAX = 600;

const toBase64Url = (text: string) => {
  let binary = "";
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
};

const fromBase64Url = (value: string) => {
  const binary = atob(value.replaceAll("-", "+").replaceAll("_", "/"));
  return new TextDecoder().decode(Uint8Array.from(binary, (ch) => ch.charCodeAt(0)));
};

export function setFlash(c: Context, flash: Flash): void {
  const bounded: Flash = { ok: flash.ok, message: flash.message.slice(0, MESSAGE_MAX), ...(flash.hint ? { hint: flash.hint.slice(0, HINT_MAX) } : {}) };
  setCookie(c, FLASH_COOKIE, toBase64Url(JSON.stringify(bounded)), { path: "/", secure: true, httpOnly: true, sameSite: "Lax", maxAge: 120 });
}

/** The outcome waiting for this page, if any; reading it clears it, so a reload does not repeat it. */
export function takeFlash(c: Context): Flash | undefined {
  const raw = getCookie(c, FLASH_COOKIE);
  if (raw === undefined) return undefined;
  deleteCookie(c, FLASH_COOKIE, { path: "/", secure: true });
  if (raw.length > 4096) return undefined;
  try {
    const value = JSON.parse(fromBase64Url(raw)) as Partial<Flash>;
    if (typeof value.ok !== "boolean" || typeof value.message !== "string") return undefined;
    return { ok: value.ok, message: value.message.slice(0, MESSAGE_MAX), ...(typeof value.hint === "string" && value.hint ? { hint: value.hint.slice(0, HINT_MAX) } : {}) };
  } catch {
    return undefined;
  }
}
