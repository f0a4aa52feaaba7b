import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { applyBlockTransactions, type ContractRunner, transferHash } from "../../../src/chain/execute.js";
import { StateView } from "../../../src/chain/state.js";
import { MapNodeDb, Trie } from "../../../src/chain/trie.js";
import { contractAt, MULTISIG_ADDRESS, multisigContract, readMultisigProposal } from "../../../src/contracts/index.js";
import { bls0chain } from "../../../src/core/bls.js";
import { sha3 } from "../../../src/core/hash.js";
import { clientIdOf, initCrypto } from "../../../src/core/schemes.js";
import { dealSharesOfSecret, type KeyShare } from "../../../src/core/threshold.js";
import { scCall, T0, TestChain, ZCN } from "../interest/harness.js";

const TO = sha3("recipient");
const STRANGER_KEYS = () => bls0chain.generateKeys();

interface Group {
  id: string;
  publicKey: string;
  secret: string;
  shares: (KeyShare & { client: string })[];
  register: Record<string, unknown>;
}

function makeGroup(t: number, n: number): Group {
  const g = bls0chain.generateKeys();
  const id = clientIdOf(g.publicKey);
  const ids = Array.from({ length: n }, (_, i) => sha3(`${id}:signer:${i + 1}`));
  const dealt = dealSharesOfSecret(g.privateKey, t, ids);
  assert.equal(dealt.groupPublicKey, g.publicKey);
  const shares = dealt.shares.map((s) => ({ ...s, client: clientIdOf(s.publicKey) }));
  return {
    id,
    publicKey: g.publicKey,
    secret: g.privateKey,
    shares,
    register: {
      client_id: id,
      signature_scheme: "bls0chain",
      public_key: g.publicKey,
      signer_threshold_ids: ids,
      signer_public_keys: shares.map((s) => s.publicKey),
      num_required: t,
    },
  };
}

function voteOf(g: Group, signer: KeyShare, proposal: string, amount: bigint, to = TO) {
  const transfer = { from: g.id, to, amount };
  return { proposal_id: proposal, transfer, signature: bls0chain.sign(signer.secretKey, transferHash(transfer)) };
}

const reg = (from: string, input: unknown) => scCall(MULTISIG_ADDRESS, from, "register", input);
const vote = (from: string, input: unknown, at = T0) => scCall(MULTISIG_ADDRESS, from, "vote", input, { at });

before(async () => {
  await initCrypto();
});

describe("multisig contract", () => {
  it("is registered at the reference address", () => {
    assert.equal(contractAt(MULTISIG_ADDRESS), multisigContract);
    assert.equal(MULTISIG_ADDRESS, "27b5ef7120252b79f9dd9c05505dd28f328c80f6863ee446daede08a84d651a7");
  });

  it("register: only by the group wallet itself, with the reference checks; once", () => {
    const g = makeGroup(2, 3);
    const c = new TestChain({ [g.id]: ZCN });
    const other = sha3("x");
    c.fails(reg(g.id, "{"), /^err_register_formatting: incorrect request format/);
    c.fails(reg(other, g.register), /^client_id_doesnot_match: /);
    c.fails(reg(g.id, { ...g.register, public_key: STRANGER_KEYS().publicKey }), /^client_id_public_key_no_match: /);
    c.fails(
      reg(g.id, { ...g.register, signer_public_keys: (g.register.signer_public_keys as string[]).slice(1) }),
      /^signers_id_and_signer_public_key_no_match: /,
    );
    c.fails(reg(g.id, { ...g.register, num_required: 1 }), /^signers_required_too_less: /);
    c.fails(reg(g.id, { ...g.register, num_required: 4 }), /^too_many_signers_required: /);
    const ids = g.register.signer_threshold_ids as string[];
    c.fails(reg(g.id, { ...g.register, signer_threshold_ids: [ids[0], ids[0], ids[2]] }), /^duplicate_signer_ids: /);
    const keys = g.register.signer_public_keys as string[];
    c.fails(reg(g.id, { ...g.register, signer_public_keys: [keys[0], keys[0], keys[2]] }), /^duplicate_signers: /);
    c.fails(reg(g.id, { ...g.register, signature_scheme: "ed25519" }), /^signature_scheme_not_supported: /);
    const many = Array.from({ length: 21 }, (_, i) => sha3(`id${i}`));
    c.fails(
      reg(g.id, { ...g.register, signer_threshold_ids: many, signer_public_keys: many.map(() => STRANGER_KEYS().publicKey) }),
      /^num_ids_too-many: /,
    );
    c.fails(reg(g.id, { ...g.register, signer_public_keys: [keys[0], keys[1], "ab"] }), /^invalid_public_key: /);
    assert.equal(c.ok(reg(g.id, g.register)), "success: multi-signature wallet registered");
    c.fails(reg(g.id, g.register), /^err_register_exists: multi-sig wallet already exists/);
    assert.deepEqual(
      (multisigContract.rest(c.view(), "getWallet", { client_id: g.id }) as { num_required: number }).num_required,
      2,
    );
  });

  it("vote: T valid share votes execute the transfer with the recovered group signature", () => {
    const g = makeGroup(3, 4);
    const c = new TestChain({ [g.id]: 2n * ZCN, ...Object.fromEntries(g.shares.map((s) => [s.client, ZCN])) });
    c.ok(reg(g.id, g.register));
    const amount = ZCN / 10n;
    const [s1, s2, s3, s4] = g.shares as [Group["shares"][0], Group["shares"][0], Group["shares"][0], Group["shares"][0]];
    assert.equal(c.ok(vote(s2.client, voteOf(g, s2, "p1", amount))), "success 2: need 2 more votes");
    assert.equal(c.ok(vote(s2.client, voteOf(g, s2, "p1", amount))), "success 2: already voted, still need 2 other votes");
    // refusals
    c.fails(
      vote(s1.client, voteOf(g, s1, "p1", amount * 2n)),
      /^err_vote_not_compatible: previous votes for same proposal differed/,
    );
    const stranger = STRANGER_KEYS();
    const strangerId = clientIdOf(stranger.publicKey);
    c.fails(
      vote(strangerId, {
        ...voteOf(g, s1, "p1", amount),
        signature: bls0chain.sign(stranger.privateKey, transferHash({ from: g.id, to: TO, amount })),
      }),
      /^err_vote_auth: authorization failure \(.* is not a signer/,
    );
    const forged = voteOf(g, s4, "p1", amount); // s4's signature sent by s1
    c.fails(vote(s1.client, forged), /^err_vote_auth: authorization failure \(the vote's signature does not verify/);
    c.fails(vote(s1.client, { ...voteOf(g, s1, "p1", amount), signature: "" }), /^err_vote_no_signature: /);
    c.fails(vote(s1.client, voteOf(g, s1, "p1", 0n)), /^err_vote_invalid_tokens: invalid number of tokens to send/);
    c.fails(vote(s1.client, { ...voteOf(g, s1, "p1", amount), proposal_id: "x".repeat(257) }), /^err_vote_too_big: /);
    c.fails(vote(s1.client, "nope"), /^err_vote_formatting: /);
    const unknownGroup = { ...voteOf(g, s1, "p9", amount), transfer: { from: sha3("nobody"), to: TO, amount } };
    c.fails(vote(s1.client, unknownGroup), /^err_vote_wallet_not_registered: /);
    assert.equal(c.balance(TO), 0n);

    assert.equal(c.ok(vote(s4.client, voteOf(g, s4, "p1", amount))), "success 1: need 1 more votes");
    const out = c.ok(vote(s3.client, voteOf(g, s3, "p1", amount)));
    const m = /^success 0: transfer executed with signature ([0-9a-f]+)$/.exec(out);
    assert.ok(m, out);
    // the recovered signature is the group key's own signature of the transfer
    assert.equal(m[1], bls0chain.sign(g.secret, transferHash({ from: g.id, to: TO, amount })));
    assert.equal(c.balance(TO), amount);
    assert.equal(c.balance(g.id), 2n * ZCN - amount);
    assert.equal(c.minted(), 0n);
    assert.match(
      c.ok(vote(s1.client, voteOf(g, s1, "p1", amount))),
      /^success 0: proposal previously executed in transaction hash [0-9a-f]{64}$/,
    );
    assert.equal(c.balance(TO), amount, "executed once");
    assert.equal(readMultisigProposal(c.view(), { client_id: g.id, proposal_id: "p1" })?.signer_signatures.length, 3);
  });

  it("a transfer the group cannot pay fails the last vote; proposals expire and are pruned", () => {
    const g = makeGroup(2, 2);
    const c = new TestChain({ [g.id]: 5n, ...Object.fromEntries(g.shares.map((s) => [s.client, ZCN])) });
    c.ok(reg(g.id, { ...g.register, exp_time: 100 }));
    const [s1, s2] = g.shares as [Group["shares"][0], Group["shares"][0]];
    c.ok(vote(s1.client, voteOf(g, s1, "big", 10n)));
    c.fails(vote(s2.client, voteOf(g, s2, "big", 10n)), /insufficient balance/);
    c.ok(vote(s1.client, voteOf(g, s1, "late", 5n), T0 + 10));
    // both expired at T0+120: voting for the second one is refused (the oldest is pruned first, but a refused
    // transaction changes nothing)
    c.fails(vote(s2.client, voteOf(g, s2, "late", 5n), T0 + 120), /^proposal_expired: proposal is expired/);
    // every vote prunes the oldest expired proposal
    assert.equal(c.ok(vote(s1.client, voteOf(g, s1, "other", 1n), T0 + 130)), "success 1: need 1 more votes");
    assert.equal(readMultisigProposal(c.view(), { client_id: g.id, proposal_id: "big" }), undefined);
    assert.ok(readMultisigProposal(c.view(), { client_id: g.id, proposal_id: "late" }));
    assert.match(c.ok(vote(s2.client, voteOf(g, s2, "other", 1n), T0 + 131)), /^success 0: transfer executed/);
    assert.equal(readMultisigProposal(c.view(), { client_id: g.id, proposal_id: "late" }), undefined);
    assert.equal(c.balance(TO), 1n);
  });

  it("chain signed transfers: the key must be the sender's and the signature must verify", () => {
    const owner = bls0chain.generateKeys();
    const from = clientIdOf(owner.publicKey);
    const db = new MapNodeDb();
    const t = Trie.at("", db);
    new StateView(t).mint(from, 100n, "", 0);
    const c = t.commit();
    db.putAll(c.newNodes);
    const runner: ContractRunner = {
      execute(ctx, _fn, input) {
        ctx.state.signedTransfer(input as Parameters<typeof ctx.state.signedTransfer>[0]);
        return "ok";
      },
    };
    const run = (st: { publicKey: string; signature: string; amount?: bigint }) => {
      const transfer = { from, to: TO, amount: st.amount ?? 40n };
      const txn = scCall(MULTISIG_ADDRESS, sha3("anyone"), "x", {});
      const r = applyBlockTransactions(c.root, db, [txn], {
        round: 1,
        minerId: "",
        contracts: () => ({
          execute: (ctx, fn) => runner.execute(ctx, fn, { ...transfer, scheme: "bls0chain", ...st }),
        }),
      });
      return r.results[0];
    };
    const good = bls0chain.sign(owner.privateKey, transferHash({ from, to: TO, amount: 40n }));
    assert.equal(run({ publicKey: owner.publicKey, signature: good })?.status, 1);
    assert.match(
      run({ publicKey: STRANGER_KEYS().publicKey, signature: good })?.output ?? "",
      /^invalid_transfer_signature: .*belongs to/,
    );
    assert.match(
      run({ publicKey: owner.publicKey, signature: good, amount: 41n })?.output ?? "",
      /^invalid_transfer_signature: .*does not verify/,
    );
    assert.match(
      run({
        publicKey: owner.publicKey,
        signature: bls0chain.sign(owner.privateKey, transferHash({ from, to: TO, amount: 400n })),
        amount: 400n,
      })?.output ?? "",
      /^insufficient_balance: /,
    );
  });
});
