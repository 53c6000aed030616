/** Form fields the dashboard's filter forms share. */

/** A labelled choice of one value, or none (`any`), for a GET filter form. */
export function Choice(props: { name: string; label: string; value: string; options: ReadonlyArray<readonly [string, string]>; any?: string }) {
  return (
    <label>
      {props.label}
      <select name={props.name}>
        <option value="">{props.any ?? "any"}</option>
        {props.options.map(([value, label]) => (
          <option value={value} selected={value === props.value}>
            {label}
          </option>
        ))}
      </select>
    </label>
  );
}

/** Each value as its own label. */
export const plainOptions = (values: readonly string[]): Array<[string, string]> => values.map((v) => [v, v]);

/** A GET filter form: its fields, then the button that applies them (a search is a link to share). */
export function FilterForm(props: { action: string; label: string; button: string; children: unknown; after?: unknown }) {
  return (
    <form method="get" action={props.action} class="card filters" role="search" aria-label={props.label}>
      {props.children}
      <div class="filter-actions">
        <button type="submit">{props.button}</button>
        {props.after}
      </div>
    </form>
  );
}

/** The link to a listing's next (older) page, when the tool gave a cursor for one. */
export function OlderLink(props: { path: string; query?: string; label: string; bare?: boolean }) {
  if (!props.query) return null;
  const link = (
    <a href={`${props.path}?${props.query}`} rel="next">
      {props.label}
    </a>
  );
  return props.bare ? link : <p>{link}</p>;
}

/** A table's header row of column headings. */
export function HeadRow(props: { cols: readonly string[] }) {
  return (
    <thead>
      <tr>
        {props.cols.map((c) => (
          <th scope="col">{c}</th>
        ))}
      </tr>
    </thead>
  );
}
