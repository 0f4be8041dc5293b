// browser.test.mjs: an operator's day in the console, in headless
// Chromium driven by puppeteer-core, against evalgate under lighttpd.
// Run with `node --test` by tests/e2e/test_console_browser.py, which
// starts the gateway and passes:
//   EVALGATE_CONSOLE   the console's root on the internal listener
//   EVALGATE_URL       the public listener's base URL
//   EVALGATE_ADMIN_KEY a key of an administrator application
//   EVALGATE_CHROMIUM  the Chromium to drive
//   EVALGATE_SHOTS     the directory the screenshots go to
// Each step saves a screenshot; the last test fails on any console
// message of level error, uncaught exception, failed request or answer
// of 400 and above the pages saw.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import puppeteer from "puppeteer-core";
import { TypeSafeClient, choice, noul } from "@typesafe-ai/sdk";

function need(name) {
	const v = process.env[name];
	if (!v)
		throw new Error(`${name} is not set ` +
		    "(run by tests/e2e/test_console_browser.py)");
	return v;
}

const ROOT = need("EVALGATE_CONSOLE");
const PUBLIC = need("EVALGATE_URL");
const ADMIN_KEY = need("EVALGATE_ADMIN_KEY");
const SHOTS = need("EVALGATE_SHOTS");
const ORIGIN = new URL(ROOT).origin;

const QUESTIONS = {
	department: choice("Which team should handle the ticket?", {
		billing: "invoice charged twice payment refund",
		technical: "error crash login broken",
	}),
	refund: noul("Does the customer ask for a refund?"),
};
const STATES = [
	"I was charged twice on my last invoice, please refund",
	"The app crashes at login with an error",
	"Payment failed and the invoice is wrong",
	"Login is broken since the update",
	"Refund my payment, the charge was twice",
	"Error after error, the crash is constant",
];

const problems = [];
let browser, page, appKey, decisionId;

async function shot(name, height) {
	await page.screenshot({ path: path.join(SHOTS, name + ".png"),
	    fullPage: !height, clip: height ? { x: 0, y: 0, width: 1100,
	    height } : undefined });
}

async function go(where) {
	await Promise.all([page.waitForNavigation(), where]);
}

async function submit(formSelector) {
	await go(page.click(formSelector + " button[type=submit]"));
}

async function h1() {
	return page.$eval("h1", (e) => e.textContent);
}

after(async () => {
	if (browser)
		await browser.close();
});

test("log in", async () => {
	browser = await puppeteer.launch({
		executablePath: need("EVALGATE_CHROMIUM"),
		headless: true,
		args: ["--no-sandbox", "--disable-gpu",
		    "--disable-dev-shm-usage"],
	});
	await browser.defaultBrowserContext().overridePermissions(ORIGIN,
	    ["clipboard-read", "clipboard-write",
	    "clipboard-sanitized-write"]);
	page = await browser.newPage();
	await page.setViewport({ width: 1100, height: 800 });
	page.on("console", (m) => {
		if (m.type() === "error")
			problems.push(`console: ${m.text()} (${page.url()})`);
	});
	page.on("pageerror", (e) => problems.push(`exception: ${e}`));
	page.on("requestfailed", (r) => problems.push(
	    `failed: ${r.url()} ${r.failure()?.errorText}`));
	page.on("response", (r) => {
		if (r.status() >= 400)
			problems.push(`${r.status()}: ${r.url()}`);
	});
	await page.goto(ROOT + "/");
	assert.equal(await h1(), "Sign in", "sent to the login form");
	await shot("login");
	await page.type("#key", ADMIN_KEY);
	await submit("form");
	assert.equal(await h1(), "Overview");
	await shot("overview-empty");
});

test("add a backend", async () => {
	await go(page.click("nav a[href$='/backends']"));
	await page.type("#b-name", "lexical");
	await page.select("#b-kind", "lexical");
	await page.type("#b-desc-", "built-in baseline");
	await submit("form[action$='/do/backend-add']");
	assert.equal(await h1(), "Backends");
	assert.match(await page.$eval("main", (m) => m.textContent),
	    /lexical lexical/);
	await shot("backends");
});

test("create an application", async () => {
	await go(page.click("nav a[href$='/applications']"));
	await page.type("#app-name", "webshop");
	await page.click("#app-logc");
	await submit("form[action$='/do/app-create']");
	assert.equal(await h1(), "webshop");
	await shot("application");
});

test("issue a key, copy it", async () => {
	await submit("form[action$='/do/key-issue']");
	assert.equal(await h1(), "Key issued");
	appKey = await page.$eval("#newkey", (e) => e.textContent);
	assert.match(appKey, /^svc_[a-z0-9]{8}_[A-Za-z0-9]{32}$/);
	await page.click("button[data-copy]");
	await page.waitForFunction(() => document.querySelector(
	    "button[data-copy]").textContent !== "Copy");
	assert.equal(await page.evaluate(() =>
	    navigator.clipboard.readText()), appKey, "the copy button");
	await shot("key");
});

test("publish a schema, grant it", async () => {
	await go(page.click("nav a[href$='/schemas']"));
	await page.type("#s-id", "tickets");
	await page.select("#s-backend", "lexical");
	await page.type("#s-thr", "0.55");
	await page.$eval("#s-q", (e, v) => { e.value = v; },
	    JSON.stringify(QUESTIONS, null, 1));
	await submit("form[action$='/do/schema-publish']");
	assert.equal(await h1(), "Schemas");
	const cells = await page.$$eval("tbody td", (t) =>
	    t.map((e) => e.textContent));
	assert.ok(cells.includes("tickets"), "the new version is listed");
	await page.type("#g-app", "webshop");
	await page.type("#g-schema", "tickets");
	await submit("form[action$='/do/grant']");
	assert.equal(await h1(), "webshop");
	await go(page.goto(ROOT + "/schemas"));
	await shot("schemas");
});

test("evaluate with the official SDK", async () => {
	const client = new TypeSafeClient({ baseURL: PUBLIC, apiKey: appKey });
	for (let i = 0; i < 30; i++) {
		const data = await client.systemOne({
		    state: STATES[i % STATES.length] + ` (#${i})`,
		    questions: QUESTIONS });
		assert.equal(data.x_schema.id, "tickets");
		if (i === 0)
			decisionId = data.x_decision_id;
		if (i === 0)
			continue;
		// Outcomes for the others, so that calibration has data.
		const r = await fetch(`${PUBLIC}/v1/decisions/` +
		    `${data.x_decision_id}/outcome`, { method: "POST",
		    headers: { authorization: `Bearer ${appKey}`,
		    "content-type": "application/json" },
		    body: JSON.stringify({ answers: { department:
		    STATES[i % STATES.length].match(/crash|login|error/i) ?
		    "technical" : "billing", refund: i % 3 !== 1 } }) });
		assert.equal(r.status, 200);
	}
});

test("find the decision in the list, open it", async () => {
	await go(page.click("nav a[href$='/decisions']"));
	await page.select("#f-app", "webshop");
	await submit("form[action$='/decisions']");
	const links = await page.$$eval("tbody a", (t) =>
	    t.map((e) => e.textContent));
	assert.equal(links.length, 30, "every decision of the application");
	assert.equal(links[0], decisionId, "the first one first");
	await shot("decisions");
	await go(page.click(`a[href$='/decisions/${decisionId}']`));
	assert.equal(await h1(), "Decision");
	assert.equal(await page.$$eval("meter", (m) => m.length), 3,
	    "its probabilities as bars");
	assert.match(await page.content(), /outcome: none yet/);
	await shot("decision");
});

test("record an outcome through the API, see it", async () => {
	const r = await fetch(`${PUBLIC}/v1/decisions/${decisionId}/outcome`,
	    { method: "POST", headers: { authorization: `Bearer ${appKey}`,
	    "content-type": "application/json" }, body: JSON.stringify({
	    answers: { department: "billing", refund: true },
	    source: "browser-test" }) });
	assert.equal(r.status, 200);
	await go(page.reload());
	const text = await page.$eval("main", (m) => m.textContent);
	assert.match(text, /outcome: billing, source browser-test/);
	await shot("decision-outcome");
});

test("open the calibration page", async () => {
	await go(page.click("nav a[href$='/calibration']"));
	await page.select("#c-schema", "tickets");
	await page.type("#c-target", "0.8");
	await submit("form[action$='/calibration']");
	assert.equal(await page.$$eval("main svg", (s) => s.length), 4,
	    "two charts for each question");
	await shot("calibration");
	await shot("calibration-top", 1280);	// the README's
	await go(page.click("nav a[href$='/admin/console/']"));
	assert.equal(await h1(), "Overview");
	await shot("overview");
});

test("a schema's page: its grant, a challenger added", async () => {
	await go(page.click("nav a[href$='/backends']"));
	await page.type("#b-name", "baseline");
	await page.select("#b-kind", "lexical");
	await submit("form[action$='/do/backend-add']");
	await go(page.click("nav a[href$='/schemas']"));
	await go(page.click("a[href$='/schemas/tickets']"));
	assert.equal(await h1(), "Schema tickets");
	assert.match(await page.$eval("main", (m) => m.textContent),
	    /webshopevery one/, "its grant, to every version");
	await page.select("#ch-backend", "baseline");
	await page.type("#ch-share", "1");
	await submit("form[action$='/do/challenger-add']");
	assert.equal(await h1(), "Schema tickets");
	const cells = await page.$$eval("tbody td", (t) =>
	    t.map((e) => e.textContent));
	assert.ok(cells.includes("baseline"), "the challenger is listed");
	await shot("schema");
});

test("log out", async () => {
	await submit("header form");
	assert.equal(await h1(), "Sign in");
	await go(page.goto(ROOT + "/"));
	assert.equal(await h1(), "Sign in", "the session is over");
	await shot("logged-out");
});

test("no console error, no failed request", () => {
	assert.deepEqual(problems, []);
});
