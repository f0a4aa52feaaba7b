/**
 * Node HTTP servers on fastify: CORS allowed, JSON bodies up to a limit, and errors in the reference form
 * `{"code":"<code>","error":"<code>: <msg>"}` — HTTP 400 by default, 404 for `resource_not_found`, 500 for
 * internal errors.
 */
import Fastify, { type FastifyInstance, type FastifyReply } from "fastify";
import { CodedError } from "../../core/errors.js";

/** Build an app; `node` names the node in internal-error messages. */
export function createNodeApp(node: string, bodyLimit = 4 * 1024 * 1024): FastifyInstance {
  const app = Fastify({ logger: false, bodyLimit });
  app.addHook("onSend", async (_req, reply, payload) => {
    reply.header("access-control-allow-origin", "*");
    return payload;
  });
  // accept any body as text; handlers decode (exact int64 JSON)
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "string" }, (_req, body, done) => done(null, body));
  app.setErrorHandler((err, _req, reply) => {
    if (err instanceof CodedError) {
      reply.code(err.code === "resource_not_found" ? 404 : 400).send(err.toJSON());
      return;
    }
    const e = err as { statusCode?: number; code?: string; message: string };
    if (e.statusCode && e.statusCode < 500) {
      const code = e.code === "FST_ERR_CTP_BODY_TOO_LARGE" ? "request_too_large" : "invalid_request";
      reply.code(e.statusCode).send({ code, error: `${code}: ${e.message}` });
      return;
    }
    reply.code(500).send({ code: "internal_error", error: `internal_error: ${node}: ${e.message}` });
  });
  app.setNotFoundHandler((req, reply) => {
    reply
      .code(404)
      .send({
        code: "resource_not_found",
        error: `resource_not_found: no route ${req.method} ${req.url.split("?")[0]} on ${node}`,
      });
  });
  return app;
}

/** Send a JSON body that may hold bigints (already stringified). */
export function sendJson(reply: FastifyReply, text: string, status = 200): FastifyReply {
  return reply.code(status).header("content-type", "application/json; charset=utf-8").send(text);
}

/** A required query parameter that must be a 64-hex hash. */
export function queryHash(q: unknown, name: string): string {
  const v = (q as Record<string, unknown> | undefined)?.[name];
  if (typeof v !== "string" || !/^[0-9a-f]{64}$/.test(v)) {
    throw new CodedError(
      { code: "invalid_request", op: "read query" },
      `query parameter "${name}" must be a 64-character hex hash, found ${v === undefined ? "nothing" : JSON.stringify(String(v).slice(0, 70))}`,
    );
  }
  return v;
}

/** An optional non-negative integer query parameter. */
export function queryInt(q: unknown, name: string): number | undefined {
  const v = (q as Record<string, unknown> | undefined)?.[name];
  if (v === undefined || v === "") return undefined;
  if (typeof v !== "string" || !/^\d{1,15}$/.test(v))
    throw new CodedError(
      { code: "invalid_request", op: "read query" },
      `query parameter "${name}" must be a non-negative integer, found ${JSON.stringify(String(v).slice(0, 30))}`,
    );
  return Number(v);
}
