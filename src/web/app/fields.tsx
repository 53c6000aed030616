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
