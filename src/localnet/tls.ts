/**
 * A local network's own certificate authority (`npm start -- --https`): a CA certificate and one server
 * certificate it signs for the names and addresses the nodes are reached at. RSA keys come from node:crypto,
 * the X.509 certificates are built with `node-forge` (pure JavaScript: nothing to install). Written as PEM files
 * under `<network>/tls/`: `ca.pem` (what clients trust), `node.pem` and `node-key.pem` (what every node serves).
 */
import { generateKeyPairSync } from "node:crypto";
import { isIP } from "node:net";
import { join } from "node:path";
import forge from "node-forge";
import * as sdk from "../sdk/index.js";

/** The files {@link writeLocalCa} made. */
export interface LocalTlsFiles {
  caFile: string;
  certFile: string;
  keyFile: string;
}

const DAY_MS = 86_400_000;

function serial(): string {
  const b = Buffer.from(sdk.systemRandomBytes(16));
  b[0] = (b[0] as number) & 0x3f; // a positive serial number
  return b.toString("hex");
}

function rsaKeys(): { pem: string; priv: forge.pki.rsa.PrivateKey; pub: forge.pki.rsa.PublicKey } {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const pem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  const priv = forge.pki.privateKeyFromPem(pem) as forge.pki.rsa.PrivateKey;
  return { pem, priv, pub: forge.pki.setRsaPublicKey(priv.n, priv.e) };
}

function baseCert(pub: forge.pki.PublicKey, nowMs: number, days: number): forge.pki.Certificate {
  const c = forge.pki.createCertificate();
  c.publicKey = pub;
  c.serialNumber = serial();
  c.validity.notBefore = new Date(nowMs - DAY_MS);
  c.validity.notAfter = new Date(nowMs + days * DAY_MS);
  return c;
}

/** PEM texts of a new CA and a server certificate for `hosts` (DNS names or IP addresses), valid `days` from `nowMs`. */
export function makeLocalCa(hosts: string[], nowMs: number, days = 825): { caPem: string; certPem: string; keyPem: string } {
  const caKeys = rsaKeys();
  const ca = baseCert(caKeys.pub, nowMs, days);
  const caName = [{ name: "commonName", value: "Cairn local network CA" }];
  ca.setSubject(caName);
  ca.setIssuer(caName);
  ca.setExtensions([
    { name: "basicConstraints", cA: true, pathLenConstraint: 0, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
    { name: "subjectKeyIdentifier" },
  ]);
  ca.sign(caKeys.priv, forge.md.sha256.create());

  const nodeKeys = rsaKeys();
  const cert = baseCert(nodeKeys.pub, nowMs, days);
  cert.setSubject([{ name: "commonName", value: hosts[0] ?? "localhost" }]);
  cert.setIssuer(caName);
  cert.setExtensions([
    { name: "basicConstraints", cA: false, critical: true },
    { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
    { name: "extKeyUsage", serverAuth: true, clientAuth: true },
    { name: "subjectAltName", altNames: [...new Set(hosts)].map((h) => (isIP(h) ? { type: 7, ip: h } : { type: 2, value: h })) },
    { name: "authorityKeyIdentifier", keyIdentifier: ca.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.sign(caKeys.priv, forge.md.sha256.create());
  return { caPem: forge.pki.certificateToPem(ca), certPem: forge.pki.certificateToPem(cert), keyPem: nodeKeys.pem };
}

/** Make the CA and the nodes' certificate for `hosts` (plus localhost and 127.0.0.1) and write them under `dir`. */
export function writeLocalCa(dir: string, hosts: string[], nowMs: number): LocalTlsFiles {
  const { caPem, certPem, keyPem } = makeLocalCa([...hosts, "localhost", "127.0.0.1"], nowMs);
  const files = { caFile: join(dir, "ca.pem"), certFile: join(dir, "node.pem"), keyFile: join(dir, "node-key.pem") };
  sdk.writeFileAtomic(files.caFile, caPem);
  sdk.writeFileAtomic(files.certFile, certPem);
  sdk.writeFileAtomic(files.keyFile, keyPem, 0o600);
  return files;
}
