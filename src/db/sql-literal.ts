/**
 * A string as an SQL literal, for the operator commands: `wrangler d1 execute` takes no bound
 * parameters, so their SQL carries values escaped here.
 */
export const sqlLiteral = (text: string) => `'${text.replace(/'/g, "''")}'`;
