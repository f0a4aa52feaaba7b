/** Reading a node's configuration and genesis files, with one error form naming what and where. */

import { readFileSync } from "node:fs";
import { CodedError } from "../../core/errors.js";
import type { NodeErrorCode } from "../errors.js";

/** The text of `path`, or `config_missing`: `cannot read <what> <path>: <cause>` (op `read <what>`). */
export function readConfigText(path: string, what: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    throw new CodedError<NodeErrorCode>(
      { code: "config_missing", op: `read ${what}` },
      `cannot read ${what} ${path}: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
}
