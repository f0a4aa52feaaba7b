/** Minimal typings of the parts of `bls-wasm` (herumi BLS compiled to WebAssembly) that Cairn uses. */
declare module "bls-wasm" {
  /** What every bls-wasm value class has (herumi serialization, comparison). */
  abstract class Common {
    serializeToHexStr(): string;
    deserializeHexStr(s: string): void;
    serialize(): Uint8Array;
    deserialize(b: Uint8Array): void;
    isEqual(rhs: this): boolean;
    isZero(): boolean;
    clear(): void;
  }
  /** An element of Fr (the scalar field); `getStr(16)`/`setStr(s, 16)` are herumi's `GetHexString` form. */
  export class Fr extends Common {
    setInt(x: number): void;
    setStr(s: string, base?: number): void;
    getStr(base?: number): string;
    setLittleEndian(b: Uint8Array): void;
    setLittleEndianMod(b: Uint8Array): void;
  }
  export class Id extends Common {
    setInt(x: number): void;
    /** base 10 or 16 (herumi `SetDecString` / `SetHexString`). */
    setStr(s: string, base?: number): void;
    getStr(base?: number): string;
    setLittleEndian(b: Uint8Array): void;
    setLittleEndianMod(b: Uint8Array): void;
  }
  export class SecretKey extends Common {
    setLittleEndian(b: Uint8Array): void;
    setLittleEndianMod(b: Uint8Array): void;
    setByCSPRNG(): void;
    getPublicKey(): PublicKey;
    sign(m: string | Uint8Array): Signature;
    share(msk: SecretKey[], id: Id): void;
    recover(secVec: SecretKey[], idVec: Id[]): void;
    add(rhs: SecretKey): void;
  }
  export class PublicKey extends Common {
    /** herumi `G2::setStr` (`SetHexString` with base 16: "1 x.a x.b y.a y.b"). */
    setStr(s: string, base?: number): void;
    getStr(base?: number): string;
    verify(sig: Signature, m: string | Uint8Array): boolean;
    share(mpk: PublicKey[], id: Id): void;
    recover(pkVec: PublicKey[], idVec: Id[]): void;
    add(rhs: PublicKey): void;
    isValidOrder(): boolean;
  }
  export class Signature extends Common {
    /** herumi `G1::setStr` (`SetHexString` with base 16: "1 x y"). */
    setStr(s: string, base?: number): void;
    getStr(base?: number): string;
    recover(sigVec: Signature[], idVec: Id[]): void;
    add(rhs: Signature): void;
    isValidOrder(): boolean;
  }
  export const BN254: number;
  export function init(curve?: number): Promise<void>;
  export function setRandFunc(f: (a: Uint8Array) => void): void;
  const bls: {
    BN254: number;
    init: typeof init;
    setRandFunc: typeof setRandFunc;
    Fr: typeof Fr;
    Id: typeof Id;
    SecretKey: typeof SecretKey;
    PublicKey: typeof PublicKey;
    Signature: typeof Signature;
  };
  export default bls;
}
