/** `logout`: forgets the saved server and credential (the file login wrote). */
import { rm } from "node:fs/promises";
import { configPath } from "../config";
import { EXIT, type Out } from "../output";

export async function logout(out: Out): Promise<number> {
  const file = configPath();
  await rm(file, { force: true });
  if (out.json) out.stdout(JSON.stringify({ ok: true, removed: file }));
  else out.stdout(`Removed ${file}.${process.env.AGENT_LEDGER_KEY ? " AGENT_LEDGER_KEY is still set in this shell." : ""}`);
  return EXIT.ok;
}
