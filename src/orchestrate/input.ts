/**
 * The orchestrated deployment input (the spec's JSON file for the setup script): every field read and checked;
 * a bad input is refused naming the field, what was expected and what was found. Counts are numbers given as
 * strings, as the reference's files give them.
 */
import { CodedError } from "../core/errors.js";
import type { OrchestrateErrorCode } from "./errors.js";

export const FS_TYPES = ["standard", "microk8s-hostpath", "openebs-cstore-sc"] as const;
export const RECORD_TYPES = ["A", "AAAA", "CNAME"] as const;

export interface MonitoringInput {
  elk: boolean;
  elk_address: string;
  rancher: boolean;
  rancher_address: string;
  grafana: boolean;
  grafana_address: string;
}

export interface StandaloneInput {
  public_key: string;
  private_key: string;
  network_url: string;
  blobber_delegate_ID: string;
  read_price: string;
  write_price: string;
  capacity: string;
}

export interface DeployInput {
  cloud_provider: string;
  cluster_name: string;
  sharder_count: number;
  miner_count: number;
  blobber_count: number;
  deploy_main: boolean;
  deploy_auxiliary: boolean;
  host_address: string;
  host_ip: string;
  kubeconfig_path: string;
  /** Milliseconds between nodes (0: none). */
  n2n_delay: number;
  fs_type: (typeof FS_TYPES)[number];
  repo_type: string;
  image_tag: string;
  record_type: (typeof RECORD_TYPES)[number];
  deployment_type: "public" | "private";
  monitoring: MonitoringInput;
  on_premise: { environment: string; host_ip: string };
  /** Present when `standalone.public_key` is set: add one blobber to an existing network. */
  standalone?: StandaloneInput;
}

const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/i;
const IPV4 = /^((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const HEX = (n: number) => new RegExp(`^[0-9a-f]{${n}}$`);

class Reader {
  constructor(
    private readonly obj: Record<string, unknown>,
    private readonly prefix: string,
  ) {}

  fail(field: string, expected: string): never {
    const v = this.obj[field];
    const found = v === undefined ? "nothing" : JSON.stringify(v).slice(0, 80);
    throw new CodedError<OrchestrateErrorCode>(
      { code: "deploy_input_invalid", op: "read deployment input" },
      `field "${this.prefix}${field}": expected ${expected}, found ${found}`,
    );
  }

  str(field: string, expected: string, ok: (s: string) => boolean = () => true): string {
    const v = this.obj[field];
    if (typeof v !== "string" || !ok(v)) this.fail(field, expected);
    return v;
  }

  bool(field: string): boolean {
    const v = this.obj[field];
    if (typeof v !== "boolean") this.fail(field, "true or false");
    return v;
  }

  /** A string flag ("true"/"false"; the reference writes these as strings) or a boolean. */
  flag(field: string): boolean {
    const v = this.obj[field];
    if (v === true || v === "true") return true;
    if (v === false || v === "false") return false;
    return this.fail(field, '"true" or "false"');
  }

  count(field: string, min: number, max: number): number {
    const s = this.str(field, `a number from ${min} to ${max} given as a string, e.g. "${Math.max(min, 1)}"`, (x) =>
      /^\d{1,4}$/.test(x),
    );
    const n = Number(s);
    if (n < min || n > max) this.fail(field, `a number from ${min} to ${max} given as a string, e.g. "${Math.max(min, 1)}"`);
    return n;
  }

  sub(field: string, expected: string): Reader {
    const v = this.obj[field];
    if (typeof v !== "object" || v === null || Array.isArray(v)) this.fail(field, expected);
    return new Reader(v as Record<string, unknown>, `${this.prefix}${field}.`);
  }

  has(field: string): boolean {
    return this.obj[field] !== undefined;
  }
}

function duration(r: Reader, field: string): number {
  const s = r.str(field, 'a delay in milliseconds as a string ("" or "0" for none, e.g. "100" or "100ms")', (x) =>
    /^(\d{1,6}(ms)?|\d{1,3}s)?$/.test(x),
  );
  if (s === "") return 0;
  if (s.endsWith("ms")) return Number(s.slice(0, -2));
  if (s.endsWith("s")) return Number(s.slice(0, -1)) * 1000;
  return Number(s);
}

/** Parse and check the deployment input (the parsed JSON). @throws CodedError `deploy_input_invalid` */
export function parseDeployInput(json: unknown): DeployInput {
  if (typeof json !== "object" || json === null || Array.isArray(json))
    throw new CodedError<OrchestrateErrorCode>(
      { code: "deploy_input_invalid", op: "read deployment input" },
      "expected a JSON object with the deployment fields",
    );
  const r = new Reader(json as Record<string, unknown>, "");
  const optionalAddress = (m: Reader, field: string) =>
    m.str(field, "a domain name, or an empty string for access through a node port", (s) => s === "" || DOMAIN.test(s));
  const m = r.sub("monitoring", "an object {elk, elk_address, rancher, rancher_address, grafana, grafana_address}");
  const op = r.sub("on_premise", "an object {environment, host_ip}");
  const out: DeployInput = {
    cloud_provider: r.str("cloud_provider", 'a non-empty string (e.g. "aws", "oci", "on-premise")', (s) => s.trim() !== ""),
    cluster_name: r.str("cluster_name", "a Kubernetes namespace name: lowercase letters, digits and '-', at most 63", (s) =>
      DNS_LABEL.test(s),
    ),
    sharder_count: r.count("sharder_count", 1, 32),
    miner_count: r.count("miner_count", 1, 64),
    blobber_count: r.count("blobber_count", 0, 256),
    deploy_main: r.bool("deploy_main"),
    deploy_auxiliary: r.bool("deploy_auxiliary"),
    host_address: r.str("host_address", "a registered domain name (e.g. cairn.example.com)", (s) => DOMAIN.test(s)),
    host_ip: r.str("host_ip", "the VM's public IPv4 address (e.g. 203.0.113.7)", (s) => IPV4.test(s)),
    kubeconfig_path: r.str("kubeconfig_path", "a path, or an empty string for the system's kubeconfig"),
    n2n_delay: duration(r, "n2n_delay"),
    fs_type: r.str("fs_type", `one of ${FS_TYPES.join(", ")}`, (s) =>
      (FS_TYPES as readonly string[]).includes(s),
    ) as DeployInput["fs_type"],
    repo_type: r.str("repo_type", 'an image repository (e.g. "localhost/cairn" or "registry.example.com/cairn")', (s) =>
      /^[a-z0-9]([a-z0-9._\-/:]*[a-z0-9])?$/.test(s),
    ),
    image_tag: r.str("image_tag", "an image tag (letters, digits, '.', '_', '-'; at most 128)", (s) =>
      /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(s),
    ),
    record_type: r.str("record_type", `a DNS record type: one of ${RECORD_TYPES.join(", ")}`, (s) =>
      (RECORD_TYPES as readonly string[]).includes(s),
    ) as DeployInput["record_type"],
    deployment_type: r.str("deployment_type", '"public" or "private"', (s) => s === "public" || s === "private") as
      | "public"
      | "private",
    monitoring: {
      elk: m.flag("elk"),
      elk_address: optionalAddress(m, "elk_address"),
      rancher: m.flag("rancher"),
      rancher_address: optionalAddress(m, "rancher_address"),
      grafana: m.flag("grafana"),
      grafana_address: optionalAddress(m, "grafana_address"),
    },
    on_premise: {
      environment: op.str("environment", "a string (empty when not on premise)"),
      host_ip: op.str("host_ip", "an IPv4 address, or an empty string", (s) => s === "" || IPV4.test(s)),
    },
  };
  if (r.has("standalone")) {
    const s = r.sub(
      "standalone",
      "an object {public_key, private_key, network_url, blobber_delegate_ID, read_price, write_price, capacity}",
    );
    if (
      s.str(
        "public_key",
        "a bls0chain public key in hex (128 characters), or an empty string (no standalone blobber)",
        (x) => x === "" || HEX(128).test(x),
      ) !== ""
    ) {
      out.standalone = {
        public_key: s.str("public_key", "a BLS public key in hex"),
        private_key: s.str("private_key", "the BLS private key in hex (64 characters)", (x) => HEX(64).test(x)),
        network_url: s.str("network_url", "the network's domain name (e.g. cairn.example.com)", (x) => DOMAIN.test(x)),
        blobber_delegate_ID: s.str("blobber_delegate_ID", "the delegate wallet's client id (64 hex characters)", (x) =>
          HEX(64).test(x),
        ),
        read_price: s.str("read_price", 'tokens per GB as a decimal string (e.g. "0.01")', (x) => /^\d+(\.\d{1,10})?$/.test(x)),
        write_price: s.str("write_price", 'tokens per GB as a decimal string (e.g. "0.01")', (x) => /^\d+(\.\d{1,10})?$/.test(x)),
        capacity: s.str("capacity", 'bytes as a decimal string (e.g. "1073741824")', (x) => /^[1-9]\d{0,17}$/.test(x)),
      };
    }
  }
  return out;
}
