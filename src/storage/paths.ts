/** Remote paths of an allocation: absolute, `/`-separated, no empty, `.` or `..` segments (no traversal). */
import { sha3 } from "../core/hash.js";
import { StorageErrors, storageError } from "./errors.js";

/** Longest accepted path, in UTF-8 bytes (paths are part of blobber store keys). */
export const MAX_PATH_LENGTH = 1000;
/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** Longest accepted name (one segment), in characters (the reference's file name limit). */
export const MAX_NAME_LENGTH = 100;

/**
 * The canonical form of a remote path (trailing `/` removed; `/` itself stays `/`).
 * @throws CodedError `invalid_path` naming the problem
 */
export function normalizePath(path: unknown, op = "check path"): string {
  if (typeof path !== "string" || path.length === 0)
    throw storageError(StorageErrors.invalidPath, op, `path must be a non-empty string, found ${JSON.stringify(path)}`);
  const bytes = new TextEncoder().encode(path).length;
  if (bytes > MAX_PATH_LENGTH)
    throw storageError(StorageErrors.invalidPath, op, `path is ${bytes} bytes, the limit is ${MAX_PATH_LENGTH}`);
  if (!path.startsWith("/"))
    throw storageError(StorageErrors.invalidPath, op, `path "${path.slice(0, 80)}" must be absolute (start with "/")`);
  if (path === "/") return "/";
  const trimmed = path.endsWith("/") ? path.slice(0, -1) : path;
  for (const seg of trimmed.slice(1).split("/")) checkName(seg, op, path);
  return trimmed;
}

/** Check one path segment. @throws CodedError `invalid_path` */
export function checkName(name: unknown, op = "check name", whole?: string): string {
  const where = whole ? ` in path "${whole.slice(0, 80)}"` : "";
  if (typeof name !== "string" || name.length === 0)
    throw storageError(StorageErrors.invalidPath, op, `empty path segment${where}`);
  if (name === "." || name === "..")
    throw storageError(StorageErrors.invalidPath, op, `"${name}" segments are not allowed${where} (no path traversal)`);
  if (name.length > MAX_NAME_LENGTH)
    throw storageError(
      StorageErrors.invalidPath,
      op,
      `name of ${name.length} characters${where}; the limit is ${MAX_NAME_LENGTH}`,
    );
  if (LONE_SURROGATE.test(name))
    throw storageError(
      StorageErrors.invalidPath,
      op,
      `name ${JSON.stringify(name.slice(0, 80))}${where} is not well-formed UTF-16 (a lone surrogate cannot be stored as UTF-8)`,
    );
  if (hasForbiddenChar(name))
    throw storageError(
      StorageErrors.invalidPath,
      op,
      `name ${JSON.stringify(name.slice(0, 80))}${where} holds a control character, "/" or "\\"`,
    );
  return name;
}

/** Parent directory of a normalized path (`/` for top-level entries). */
export function parentOf(path: string): string {
  if (path === "/") return "/";
  const i = path.lastIndexOf("/");
  return i <= 0 ? "/" : path.slice(0, i);
}

/** Last segment of a normalized path (`/` for the root). */
export function nameOf(path: string): string {
  if (path === "/") return "/";
  return path.slice(path.lastIndexOf("/") + 1);
}

/** Join a directory and a name. */
export function joinPath(dir: string, name: string): string {
  return dir === "/" ? `/${name}` : `${dir}/${name}`;
}

/** Every ancestor directory of a normalized path, root first, excluding the path itself. */
export function ancestorsOf(path: string): string[] {
  if (path === "/") return [];
  const out = ["/"];
  const segs = path.slice(1).split("/");
  for (let i = 1; i < segs.length; i++) out.push(`/${segs.slice(0, i).join("/")}`);
  return out;
}

/** Whether `path` is `dir` or inside it. */
export function isWithin(path: string, dir: string): boolean {
  return dir === "/" || path === dir || path.startsWith(`${dir}/`);
}

/** The reference lookup hash of a path: SHA3-256 of `allocationId:path`. */
export function lookupHash(allocationId: string, path: string): string {
  return sha3(`${allocationId}:${path}`);
}

/** Depth of a path: number of segments (root = 0). */
export function depthOf(path: string): number {
  return path === "/" ? 0 : path.split("/").length - 1;
}

function hasForbiddenChar(name: string): boolean {
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c < 0x20 || c === 0x7f || c === 0x2f || c === 0x5c) return true;
  }
  return false;
}
