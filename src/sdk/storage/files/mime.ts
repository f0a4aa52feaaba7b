/** The MIME type a file gets from its name's extension when the uploader names none. */

const MIME: Record<string, string> = {
  txt: "text/plain",
  html: "text/html",
  json: "application/json",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  pdf: "application/pdf",
  mp4: "video/mp4",
  mp3: "audio/mpeg",
  zip: "application/zip",
  csv: "text/csv",
  md: "text/markdown",
};

/** The MIME type of `path` by its extension (`application/octet-stream` when unknown). */
export function mimeTypeOf(path: string): string {
  const ext = path.split(".").pop()?.toLowerCase() ?? "";
  return MIME[ext] ?? "application/octet-stream";
}
