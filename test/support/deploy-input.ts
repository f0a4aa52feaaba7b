/**
 * The deployment input (the spec's JSON for `cairn-deploy`) the orchestrate tests start from: one builder, so
 * each test names only the fields it changes.
 */
import assert from "node:assert/strict";
import { DaemonSet, Deployment, StatefulSet } from "kubernetes-models/apps/v1";
import { Ingress, NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import { Role, RoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1";
import { ConfigMap, Namespace, Secret, Service, ServiceAccount } from "kubernetes-models/v1";
import type { Manifest } from "../../src/orchestrate/manifests.js";

/** The standalone block of a blobber joining an existing network (well-formed values). */
export const STANDALONE = {
  public_key: "ab".repeat(64),
  private_key: "cd".repeat(32),
  network_url: "cairn.example.com",
  blobber_delegate_ID: "ef".repeat(32),
  read_price: "0.01",
  write_price: "0.1",
  capacity: "1073741824",
};

/** A good deployment input: 1 sharder, 3 miners, 2 blobbers, every monitoring flag on; `over` replaces top-level fields. */
export function deployInput(over: Record<string, unknown> = {}): Record<string, unknown> & {
  monitoring: Record<string, string>;
} {
  return {
    cloud_provider: "on-premise",
    cluster_name: "cairn-test",
    sharder_count: "1",
    miner_count: "3",
    blobber_count: "2",
    deploy_main: true,
    deploy_auxiliary: true,
    host_address: "cairn.example.com",
    host_ip: "203.0.113.7",
    kubeconfig_path: "",
    n2n_delay: "",
    fs_type: "standard",
    repo_type: "localhost/cairn",
    image_tag: "0.1.0",
    record_type: "A",
    deployment_type: "public",
    monitoring: { elk: "true", elk_address: "", rancher: "true", rancher_address: "", grafana: "true", grafana_address: "" },
    on_premise: { environment: "", host_ip: "" },
    standalone: {
      public_key: "",
      private_key: "",
      network_url: "",
      blobber_delegate_ID: "",
      read_price: "",
      write_price: "",
      capacity: "",
    },
    ...over,
  };
}

const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  Namespace,
  Secret,
  Service,
  ConfigMap,
  Deployment,
  StatefulSet,
  DaemonSet,
  Ingress,
  NetworkPolicy,
  ServiceAccount,
  Role,
  RoleBinding,
};

/** Validate every manifest offline against its Kubernetes schema (kubernetes-models); an unknown kind fails. */
export function validateManifests(ms: Manifest[]): void {
  for (const m of ms) {
    const Model = MODELS[m.kind];
    assert.ok(Model, `no schema for ${m.kind}`);
    new Model(m as never).validate();
  }
}
