/**
 * Icons for the server and its tools, served by the Worker itself (GET /icons/<name>.svg) so a
 * listing carries a short URL rather than an image. One mark for the server, and one per
 * toolset: a coloured disc with the toolset's initial, so tools of one toolset look alike.
 */
import type { Icon } from "@modelcontextprotocol/server";
import { TOOLSETS } from "./registry";

const SERVER_MARK = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" rx="12" fill="#1f3b57"/><path d="M16 14h8v30h24v8H16z" fill="#f4c95d"/><path d="M30 14h18v6H30zM30 25h18v6H30z" fill="#9fc7e8"/></svg>`;

const PALETTE = ["#2f6f9f", "#8a4f9e", "#3f8f5a", "#b5562d", "#6b7a2a", "#9e3f5a", "#2a7a7a", "#5a5fb0"];

function toolsetMark(id: string, index: number): string {
  const letter = id.charAt(0).toUpperCase();
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><circle cx="32" cy="32" r="30" fill="${PALETTE[index % PALETTE.length]}"/><text x="32" y="43" font-family="sans-serif" font-size="30" font-weight="700" text-anchor="middle" fill="#fff">${letter}</text></svg>`;
}

const ICONS = new Map<string, string>([["agent-ledger", SERVER_MARK], ...[...TOOLSETS.map((t) => t.id), "compact"].map((id, i) => [`toolset-${id}`, toolsetMark(id, i)] as [string, string])]);

/** The SVG for an icon name, or undefined. */
export const iconSvg = (name: string): string | undefined => ICONS.get(name);

const icon = (origin: string, name: string): Icon => ({ src: `${origin}/icons/${name}.svg`, mimeType: "image/svg+xml", sizes: ["any"] });

export const serverIcons = (origin: string): Icon[] => [icon(origin, "agent-ledger")];

export const toolIcons = (origin: string, toolset: string): Icon[] => (ICONS.has(`toolset-${toolset}`) ? [icon(origin, `toolset-${toolset}`)] : serverIcons(origin));
