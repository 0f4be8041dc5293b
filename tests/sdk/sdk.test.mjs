// sdk.test.mjs: the official TypeSafe JavaScript SDK (@typesafe-ai/sdk,
// pinned in package.json) used as a drop-in client of evalgate, with only
// baseURL and apiKey changed.  Run with `node --test` by
// tests/e2e/test_sdk.py, which starts the gateway and passes:
//   EVALGATE_URL          the gateway's base URL
//   EVALGATE_KEY          a key of an application granted the "sdk" schema
//   EVALGATE_LIMITED_KEY  a key of an application limited to
//                         EVALGATE_LIMITED_RATE calls per minute
//   EVALGATE_MODELS       JSON: the {name, description, release_date} of
//                         every enabled backend
//   EVALGATE_BACKEND      the backend the "sdk" schema is bound to
//                         (optional, "lexical" when not set)
// The question shapes below are the "sdk" schema test_sdk.py publishes.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
	TypeSafeClient, VERSION, choice, score, noul,
	APIError, TypeSafeError, UnprocessableEntityError, AuthenticationError,
	PermissionDeniedError, RateLimitError,
} from "@typesafe-ai/sdk";

function need(name) {
	const v = process.env[name];
	if (!v)
		throw new Error(`${name} is not set (run by tests/e2e/test_sdk.py)`);
	return v;
}

const BASE_URL = need("EVALGATE_URL");
const KEY = need("EVALGATE_KEY");
const LIMITED_KEY = need("EVALGATE_LIMITED_KEY");
const LIMITED_RATE = Number(need("EVALGATE_LIMITED_RATE"));
const MODELS = JSON.parse(need("EVALGATE_MODELS"));
const BACKEND = process.env.EVALGATE_BACKEND || "lexical";

// The drop-in client: nothing but the base URL and the key.
const client = new TypeSafeClient({ baseURL: BASE_URL, apiKey: KEY });

const UUID7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const LEVELS = ["whenever", "this week", "today", "outage right now"];
const QUESTIONS = {
	department: choice("Which team should handle the ticket?", {
		billing: "invoice charged twice payment",
		technical: "error crash login broken",
		sales: null,
	}),
	urgency: score("How urgent is the ticket?", LEVELS),
	refund: noul("Does the customer ask for a refund?",
	    { true: "refund money back", false: "no refund" }),
	escalate: noul(),		// instructions null, no criteria
};
const STATE = "I was charged twice on my last invoice. " +
    "Please refund the payment, I want my money back.";

const close = (a, b) => Math.abs(a - b) < 1e-9;
const sum = (xs) => xs.reduce((s, x) => s + x, 0);

function assertProbabilities(p, keys, where) {
	assert.deepEqual(Object.keys(p).sort(), [...keys].sort(),
	    `${where}: one probability per option`);
	for (const [k, v] of Object.entries(p))
		assert.ok(Number.isFinite(v) && v >= 0 && v <= 1,
		    `${where}.${k} = ${v} is a probability`);
	assert.ok(close(sum(Object.values(p)), 1), `${where} sums to 1`);
}

// The contract of a 200 as the strict (Python) SDK reads it.
function assertTypedAnswers(data) {
	assert.equal(typeof data, "object", "the body is parsed JSON");
	assert.deepEqual(Object.keys(data.answers).sort(),
	    Object.keys(QUESTIONS).sort(), "one answer per question");

	const d = data.answers.department;
	const opts = Object.keys(QUESTIONS.department.criteria);
	assert.equal(d.type, "choice");
	assertProbabilities(d.probabilities, opts, "department.probabilities");
	assert.equal(typeof d.confidence, "number", "choice confidence");
	assert.ok(close(d.confidence, Math.max(...Object.values(d.probabilities))),
	    "choice confidence is the max probability");
	assert.ok(opts.includes(d.choice), "choice is an option key");
	assert.equal(d.probabilities[d.choice], d.confidence,
	    "choice is the most probable option");
	assert.equal(typeof d.x_abstain, "boolean");

	const u = data.answers.urgency;
	const idx = LEVELS.map((_, i) => String(i));
	assert.equal(u.type, "score");
	assert.deepEqual(u.legend, Object.fromEntries(LEVELS.map((l, i) =>
	    [String(i), l])), "legend keyed \"0\"..\"n-1\" by the levels");
	assertProbabilities(u.probabilities, idx, "urgency.probabilities");
	assert.equal(typeof u.score, "number", "score is a number");
	assert.ok(close(u.score, sum(idx.map((i) => i * u.probabilities[i]))),
	    "score is the expected level index");
	assert.ok(u.score >= 0 && u.score <= LEVELS.length - 1,
	    "score within 0..n-1");
	assert.ok(close(u.confidence, Math.max(...Object.values(u.probabilities))),
	    "score confidence is the max probability");
	assert.equal(typeof u.x_abstain, "boolean");

	for (const name of ["refund", "escalate"]) {
		const n = data.answers[name];
		assert.equal(n.type, "noul");
		assert.ok(Number.isFinite(n.noul) && n.noul >= 0 && n.noul <= 1,
		    `${name}.noul is P(true)`);
		assert.ok(!("confidence" in n), `${name}: noul has no confidence`);
		assert.ok(!("probabilities" in n), `${name}: nor probabilities`);
		assert.equal(typeof n.x_abstain, "boolean");
	}

	assert.ok(Number.isInteger(data.usage.input_tokens) &&
	    Number.isInteger(data.usage.output_tokens), "usage integers");
}

// Runs fn, which must reject with an SDK error of class cls and status;
// checks what every SDK error from the gateway carries and returns it.
async function rejectsWith(fn, cls, status, code) {
	let err;
	try {
		await fn();
	} catch (e) {
		err = e;
	}
	assert.ok(err !== undefined, `expected a ${cls.name}, got a success`);
	if (!(err instanceof cls))
		assert.fail(`expected a ${cls.name}, got ${err.name}: ${err.message}`);
	assert.ok(err instanceof APIError && err instanceof TypeSafeError,
	    "an APIError, a TypeSafeError");
	assert.equal(err.name, cls.name);
	assert.equal(err.status, status);
	assert.deepEqual(Object.keys(err.body), ["error"], "one error object");
	assert.equal(err.body.error.code, code);
	assert.equal(typeof err.body.error.message, "string");
	assert.ok(err.body.error.message.length > 0, "a message");
	assert.equal(typeof err.body.error.details, "object");
	assert.equal(err.message, `${status} ${err.body.error.message}`,
	    "the SDK's message is our error.message");
	assert.ok(err.requestId, "the error carries the request id");
	assert.equal(err.requestId, err.headers.get("x-service-request-id"),
	    "the error's requestId is our x-service-request-id");
	return err;
}

test("the SDK is the pinned version", () => {
	assert.equal(VERSION, "0.6.0");
});

test("typed answers for choice, score and noul through systemOne", async () => {
	const data = await client.systemOne({ state: STATE, questions: QUESTIONS });
	assertTypedAnswers(data);
	assert.equal(data.answers.department.choice, "billing",
	    "the client's own texts reached the backend");
});

test("the SDK's default model jev-latest is echoed", async () => {
	const data = await client.systemOne({ state: STATE, questions: QUESTIONS });
	assert.equal(client.defaultModel, "jev-latest");
	assert.equal(data.model, "jev-latest");
});

test("an explicit model is echoed unchanged", async () => {
	const data = await client.systemOne({ model: "jev-1.14.0", state: STATE,
	    questions: QUESTIONS });
	assert.equal(data.model, "jev-1.14.0");
});

test("a structured state is accepted", async () => {
	const data = await client.systemOne({ questions: QUESTIONS,
	    state: { ticket: STATE, channel: "email", attempts: [1, 2] } });
	assertTypedAnswers(data);
});

test("withResponse: requestId is the x-service-request-id header", async () => {
	const a = await client.systemOne({ state: STATE, questions: QUESTIONS })
	    .withResponse();
	const b = await client.systemOne({ state: STATE, questions: QUESTIONS })
	    .withResponse();
	assert.equal(a.response.status, 200);
	assert.match(a.response.headers.get("content-type"), /^application\/json/);
	assertTypedAnswers(a.data);
	assert.equal(typeof a.requestId, "string");
	assert.ok(a.requestId.length > 0, "a request id");
	assert.equal(a.requestId, a.response.headers.get("x-service-request-id"));
	assert.notEqual(a.requestId, b.requestId, "one id per request");
});

test("x_ extensions are visible in the data", async () => {
	const a = await client.systemOne({ state: STATE, questions: QUESTIONS });
	const b = await client.systemOne({ state: STATE, questions: QUESTIONS });
	assert.match(a.x_decision_id, UUID7, "x_decision_id is a UUIDv7");
	assert.notEqual(a.x_decision_id, b.x_decision_id, "a decision per call");
	assert.equal(a.x_backend, BACKEND);
	assert.deepEqual(a.x_schema, { id: "sdk", version: 1 });
	assert.equal(a.x_schema_version, 1);
	assert.ok(Number.isInteger(a.x_latency_ms.gateway) &&
	    Number.isInteger(a.x_latency_ms.backend), "x_latency_ms integers");
	for (const ans of Object.values(a.answers))
		assert.equal(typeof ans.x_abstain, "boolean", "x_abstain");
});

test("models.list returns the enabled backends", async () => {
	const models = await client.models.list();
	assert.ok(Array.isArray(models), "the unwrapped array");
	for (const m of models) {
		assert.deepEqual(Object.keys(m).sort(),
		    ["description", "name", "release_date"]);
		for (const v of Object.values(m))
			assert.equal(typeof v, "string");
	}
	const byName = (x, y) => x.name < y.name ? -1 : x.name > y.name ? 1 : 0;
	assert.deepEqual([...models].sort(byName), [...MODELS].sort(byName));
});

test("422: empty choice criteria is an UnprocessableEntityError", async () => {
	const e = await rejectsWith(() => client.systemOne({ state: STATE,
	    questions: { ...QUESTIONS, department: choice("Which?", {}) } }),
	    UnprocessableEntityError, 422, "validation_error");
	assert.match(JSON.stringify(e.body.error.details),
	    /questions\.department\.criteria/, "details name the field");
});

test("422: an unknown question type is an UnprocessableEntityError", async () => {
	await rejectsWith(() => client.systemOne({ state: STATE,
	    questions: { ...QUESTIONS, escalate: { type: "zzz" } } }),
	    UnprocessableEntityError, 422, "validation_error");
});

test("422: a missing state is an UnprocessableEntityError", async () => {
	const e = await rejectsWith(() => client.systemOne({ questions: QUESTIONS }),
	    UnprocessableEntityError, 422, "validation_error");
	assert.match(JSON.stringify(e.body.error.details), /state/,
	    "details name the field");
});

test("422: a shape matching no schema is invalid_schema", async () => {
	await rejectsWith(() => client.systemOne({ state: STATE, questions: {
	    ...QUESTIONS, urgency: score("How urgent?", [...LEVELS, "extra"]) } }),
	    UnprocessableEntityError, 422, "invalid_schema");
});

test("403: an ungranted schema is a PermissionDeniedError", async () => {
	await rejectsWith(() => client.systemOne({ state: STATE,
	    questions: { secret: noul("Is it secret?") } }),
	    PermissionDeniedError, 403, "schema_not_granted");
});

test("401: a bad key is an AuthenticationError", async () => {
	for (const apiKey of ["svc_aaaaaaaa_" + "0".repeat(32), "not-a-key"]) {
		const bad = new TypeSafeClient({ baseURL: BASE_URL, apiKey });
		await rejectsWith(() => bad.systemOne({ state: STATE,
		    questions: QUESTIONS }), AuthenticationError, 401,
		    "invalid_api_key");
		await rejectsWith(() => bad.models.list(), AuthenticationError,
		    401, "invalid_api_key");
	}
});

test("429: beyond the app's rate a RateLimitError with retryAfterMs", async () => {
	// No retries: the SDK would otherwise wait retry-after-ms (~30 s).
	const limited = new TypeSafeClient({ baseURL: BASE_URL,
	    apiKey: LIMITED_KEY, retry: { maxRetries: 0 } });
	const call = () => limited.systemOne({ state: STATE, questions: QUESTIONS });
	for (let i = 0; i < LIMITED_RATE; i++)
		assertTypedAnswers(await call());
	for (let i = 0; i < 2; i++) {
		const e = await rejectsWith(call, RateLimitError, 429,
		    "rate_limited");
		assert.ok(Number.isFinite(e.retryAfterMs) && e.retryAfterMs > 0 &&
		    e.retryAfterMs <= 60000, `retryAfterMs ${e.retryAfterMs}`);
		assert.equal(e.retryAfterMs, Number(e.headers.get("retry-after-ms")),
		    "retryAfterMs is our retry-after-ms");
		assert.ok(Number(e.headers.get("retry-after")) >= 1,
		    "Retry-After in whole seconds, at least 1");
	}
});
