/**
 * One request signed with SigV4 by the TypeScript client, to a loopback server the test runs
 * (tests/integration/test_client_auth.py checks the signature with botocore).
 * HOOKLINE_URL names the server; the credentials are the test's.
 */
import { createHooklineClient } from "../src/index.js";

const client = createHooklineClient(process.env.HOOKLINE_URL!, {
  sigv4: {
    region: "eu-west-1",
    credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "test-secret-key" },
  },
});
await client.POST("/v1/tenants", { body: { name: "signed from typescript" } });
await client.GET("/v1/deliveries", { params: { query: { limit: 2, state: "failed" } } });
