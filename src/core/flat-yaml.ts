/**
 * A fast path for the flat YAML files the CLIs read on every command (config.yaml: `key: value # comment` lines).
 * The `yaml` library compiles much of itself on its first document (about 20 ms of a command's CPU); a file made
 * only of lines this reader is sure about is read here, with the result the library gives, and anything else
 * (nesting, lists, quotes, anchors, numbers other than plain decimal integers, …) is left to the library.
 */

const LINE = /^([A-Za-z_][A-Za-z0-9_]*): +([^\s#]+)(?: +#.*)?$/;
/** A plain scalar of the YAML 1.2 core schema that can only be a string or a decimal integer. */
const PLAIN = /^[A-Za-z0-9_][A-Za-z0-9_./:-]*$/;
const INT = /^(?:0|[1-9][0-9]{0,14})$/;
/** Plain scalars the core schema reads as something other than a string (or that a reader might doubt). */
const NOT_STRING = /^(?:[-+]?[0-9.]+(?:[eE][-+]?[0-9]+)?|0[xo].*|true|false|null|True|False|Null|TRUE|FALSE|NULL)$/;

/**
 * The mapping a flat YAML document holds, or undefined when the document is not one this reader is sure about
 * (the caller then parses it with the library). Integers come as numbers, or bigints with `intAsBigInt`.
 */
export function parseFlatYaml(text: string, intAsBigInt = false): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  for (const raw of text.split("\n")) {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (/^[ \t]*(?:#.*)?$/.test(line)) continue;
    const m = LINE.exec(line);
    if (!m) return undefined;
    const key = m[1] as string;
    const value = m[2] as string;
    if (Object.hasOwn(out, key) || NOT_STRING.test(key) || !PLAIN.test(value)) return undefined;
    if (INT.test(value)) out[key] = intAsBigInt ? BigInt(value) : Number(value);
    else if (value === "true" || value === "false") out[key] = value === "true";
    else if (NOT_STRING.test(value) || value.endsWith(":")) return undefined;
    else out[key] = value;
  }
  return out;
}
