/**
 * The HTTP transport every client-side call goes through. Nodes use the same interface to talk to each
 * other. Two implementations pass one compliance suite: real HTTP (undici) and an in-process network.
 */
export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE";

export interface TransportRequest {
  method: HttpMethod;
  url: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  timeoutMs?: number;
}

export interface TransportResponse {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array;
  text(): string;
  json<T = unknown>(): T;
}

export interface Transport {
  request(req: TransportRequest): Promise<TransportResponse>;
  close?(): Promise<void>;
}
