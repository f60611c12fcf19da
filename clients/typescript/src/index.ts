/**
 * The Hookline management API from TypeScript: `paths` and `components` are generated from
 * docs/openapi.json by openapi-typescript (src/schema.ts, `make clients`: never edit it);
 * calls go through openapi-fetch, typed by those paths. This file is the hand-written part:
 * how a client authenticates.
 *
 *   bearer: a tenant principal's key, or `hookline dev`'s HOOKLINE_API_KEY
 *   sigv4:  a deployment behind API Gateway's IAM authorisation (AWS Signature Version 4)
 */
import { Sha256 } from "@aws-crypto/sha256-js";
import { SignatureV4 } from "@smithy/signature-v4";
import createClient, { type Client, type Middleware } from "openapi-fetch";

import type { components, operations, paths } from "./schema.js";

export type { components, operations, paths };
export type Problem = components["schemas"]["Problem"];
export type HooklineClient = Client<paths>;

/** AWS credentials, as `@aws-sdk/credential-providers` resolves them. */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export type Auth =
  | { bearer: string }
  | {
      sigv4: {
        region: string;
        credentials: AwsCredentials | (() => Promise<AwsCredentials>);
      };
    };

/** A typed client of the API at `baseUrl` (e.g. http://127.0.0.1:8080 for `hookline dev`). */
export function createHooklineClient(baseUrl: string, auth: Auth): HooklineClient {
  const client = createClient<paths>({ baseUrl });
  client.use("bearer" in auth ? bearerAuth(auth.bearer) : sigv4Auth(auth.sigv4.region, auth.sigv4.credentials));
  return client;
}

/** Sends `Authorization: Bearer <key>`. */
export function bearerAuth(key: string): Middleware {
  return {
    onRequest({ request }) {
      request.headers.set("Authorization", `Bearer ${key}`);
      return request;
    },
  };
}

/** Signs every request with SigV4 for `execute-api` (method, path, query, host, body). */
export function sigv4Auth(
  region: string,
  credentials: AwsCredentials | (() => Promise<AwsCredentials>),
  service = "execute-api",
): Middleware {
  const signer = new SignatureV4({ credentials, region, service, sha256: Sha256 });
  return {
    async onRequest({ request }) {
      const url = new URL(request.url);
      const body = request.body === null ? undefined : await request.clone().text();
      const headers: Record<string, string> = { host: url.host };
      const type = request.headers.get("content-type");
      if (type !== null) headers["content-type"] = type;
      const query: Record<string, string> = {};
      url.searchParams.forEach((value, key) => {
        query[key] = value;
      });
      const signed = await signer.sign({
        method: request.method,
        protocol: url.protocol,
        hostname: url.hostname,
        port: url.port ? Number(url.port) : undefined,
        path: url.pathname,
        query,
        headers,
        body,
      });
      for (const [name, value] of Object.entries(signed.headers)) {
        if (name.toLowerCase() !== "host") request.headers.set(name, value);
      }
      return request;
    },
  };
}
