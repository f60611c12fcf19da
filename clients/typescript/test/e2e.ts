/**
 * The TypeScript client against a running `hookline dev` (tests/e2e/test_clients.py runs it):
 * HOOKLINE_URL, HOOKLINE_API_KEY and SINK_URL (a loopback subscriber) come from the test.
 * Prints one JSON line: what each step saw.
 */
import { createHooklineClient } from "../src/index.js";

const client = createHooklineClient(process.env.HOOKLINE_URL!, {
  bearer: process.env.HOOKLINE_API_KEY!,
});

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const tenant = await client.POST("/v1/tenants", { body: { name: "client-typescript" } });
if (!tenant.data) throw new Error(JSON.stringify(tenant.error));
const tenantId = tenant.data.id;

const source = await client.POST("/v1/sources", {
  body: { tenant_id: tenantId, scheme: "standard", secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" },
});
if (!source.data) throw new Error(JSON.stringify(source.error));

const endpoint = await client.POST("/v1/endpoints", {
  body: { tenant_id: tenantId, url: process.env.SINK_URL! },
});
if (!endpoint.data) throw new Error(JSON.stringify(endpoint.error));
const endpointId = endpoint.data.id;

for (let n = 0; n < 3; n++) {
  const published = await client.POST("/v1/events", {
    body: { tenant_id: tenantId, type: "order.created", payload: { n } },
  });
  if (!published.data) throw new Error(JSON.stringify(published.error));
}

// Page through the endpoint's deliveries, two at a time, until all three are delivered.
const delivered = await until("three delivered deliveries", async () => {
  let cursor: string | undefined;
  let pages = 0;
  const states: string[] = [];
  do {
    const page = await client.GET("/v1/deliveries", {
      params: { query: { endpoint_id: endpointId, limit: 2, cursor } },
    });
    if (!page.data) throw new Error(JSON.stringify(page.error));
    pages += 1;
    states.push(...page.data.items.map((d) => d.state));
    cursor = page.data.next_cursor ?? undefined;
  } while (cursor);
  return states.length === 3 && states.every((s) => s === "delivered")
    ? { pages, deliveries: states.length }
    : undefined;
});

const replay = await client.POST("/v1/replays", {
  body: {
    endpoint_id: endpointId,
    since: "1h",
    states: ["delivered"],
    reason: "typescript client e2e",
  },
});
if (!replay.data) throw new Error(JSON.stringify(replay.error));
const replayId = replay.data.id;
const finished = await until("the replay to finish", async () => {
  const now = await client.GET("/v1/replays/{replay_id}", {
    params: { path: { replay_id: replayId } },
  });
  const state = now.data?.state;
  return state === "succeeded" || state === "failed" ? state : undefined;
});

const missing = await client.GET("/v1/endpoints/{endpoint_id}", {
  params: { path: { endpoint_id: "ep_none" } },
});
const problem = missing.error;

console.log(
  JSON.stringify({
    ...delivered,
    replay: finished,
    problem: { status: problem?.status, title: problem?.title },
  }),
);
