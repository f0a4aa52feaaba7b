/** Minimal typings of the parts of `bls-wasm` (herumi BLS compiled to WebAssembly) that Cairn uses. */
declare module "bls-wasm" {
  interface Common {
    serializeToHexStr(): string;
    deserializeHexStr(s: string): void;
    serialize(): Uint8Array;
    deserialize(b: Uint8Array): void;
    isEqual(rhs: this): boolean;
    isZero(): boolean;
    clear(): void;
  }
  export class Id implements Common {
    serializeToHexStr(): string;
    deserializeHexStr(s: string): void;
    serialize(): Uint8Array;
    deserialize(b: Uint8Array): void;
    isEqual(rhs: this): boolean;
    isZero(): boolean;
    clear(): void;
    setInt(x: number): void;
    setLittleEndian(b: Uint8Array): void;
    setLittleEndianMod(b: Uint8Array): void;
  }
  export class SecretKey implements Common {
    serializeToHexStr(): string;
    deserializeHexStr(s: string): void;
    serialize(): Uint8Array;
    deserialize(b: Uint8Array): void;
    isEqual(rhs: this): boolean;
    isZero(): boolean;
    clear(): void;
    setLittleEndian(b: Uint8Array): void;
    setLittleEndianMod(b: Uint8Array): void;
    setByCSPRNG(): void;
    getPublicKey(): PublicKey;
    sign(m: string | Uint8Array): Signature;
    share(msk: SecretKey[], id: Id): void;
    recover(secVec: SecretKey[], idVec: Id[]): void;
    add(rhs: SecretKey): void;
  }
  export class PublicKey implements Common {
    serializeToHexStr(): string;
    deserializeHexStr(s: string): void;
    serialize(): Uint8Array;
    deserialize(b: Uint8Array): void;
    isEqual(rhs: this): boolean;
    isZero(): boolean;
    clear(): void;
    verify(sig: Signature, m: string | Uint8Array): boolean;
    share(mpk: PublicKey[], id: Id): void;
    recover(pkVec: PublicKey[], idVec: Id[]): void;
    add(rhs: PublicKey): void;
    isValidOrder(): boolean;
  }
  export class Signature implements Common {
    serializeToHexStr(): string;
    deserializeHexStr(s: string): void;
    serialize(): Uint8Array;
    deserialize(b: Uint8Array): void;
    isEqual(rhs: this): boolean;
    isZero(): boolean;
    clear(): void;
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
    Id: typeof Id;
    SecretKey: typeof SecretKey;
    PublicKey: typeof PublicKey;
    Signature: typeof Signature;
  };
  export default bls;
}
