/** The command line's entry, run by bin/agent-ledger.mjs (bundled, or from source in a clone). */
import { main } from "./main";

process.exitCode = await main(process.argv.slice(2));
