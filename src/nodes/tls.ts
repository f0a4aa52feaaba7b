/**
 * TLS for the node programs: the certificate, key and CA files named in node.yaml (`tls:`) or by the providers'
 * `--tls_cert`/`--tls_key`/`--tls_ca` flags, read once at start. A node with TLS serves HTTPS
 * (`listen(app, host, port, tls)`) and trusts `ca` besides the system's authorities when it calls others.
 */
import { readFileSync } from "node:fs";
import { CodedError, errorMessage } from "../core/errors.js";
import type { NodeErrorCode } from "./errors.js";

/** Where a node's TLS files are. */
export interface TlsFiles {
  certFile: string;
  keyFile: string;
  /** CA certificate(s) to trust when calling other nodes (absent: the system's authorities only). */
  caFile?: string;
}

/** The PEM texts of {@link TlsFiles}. */
export interface TlsMaterial {
  cert: string;
  key: string;
  ca?: string;
}

function readPem(file: string, what: string, marker: RegExp, op: string): string {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new CodedError<NodeErrorCode>({ code: "config_invalid", op }, `cannot read the ${what} ${file}: ${errorMessage(err)}`, {
      cause: err,
    });
  }
  if (!marker.test(text))
    throw new CodedError<NodeErrorCode>(
      { code: "config_invalid", op },
      `${file}: expected a PEM ${what}, found no ${marker.source} block`,
    );
  return text;
}

/** Read and check the PEM files. @throws CodedError `config_invalid` naming the file and what it should hold */
export function readTls(files: TlsFiles, op = "start HTTPS"): TlsMaterial {
  const out: TlsMaterial = {
    cert: readPem(files.certFile, "certificate", /-----BEGIN CERTIFICATE-----/, op),
    key: readPem(files.keyFile, "private key", /-----BEGIN (EC |RSA )?PRIVATE KEY-----/, op),
  };
  if (files.caFile !== undefined) out.ca = readPem(files.caFile, "CA certificate", /-----BEGIN CERTIFICATE-----/, op);
  return out;
}

/** Read only the CA file (a node or client that calls HTTPS nodes but serves plain HTTP). */
export function readCa(caFile: string, op = "read CA file"): string {
  return readPem(caFile, "CA certificate", /-----BEGIN CERTIFICATE-----/, op);
}
