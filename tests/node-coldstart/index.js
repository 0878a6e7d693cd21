// A Node.js Lambda function of the same shape as the Rust ones, for the cold-start bench
// (`BENCH_ONLY=coldstart`): it requires the DynamoDB and S3 clients and builds both at init,
// then runs the Lambda Runtime API loop with fetch, answering every event the way an HTTP
// function answers a request without a token (401), without touching the network otherwise.
"use strict";

const { DynamoDBClient } = require("@aws-sdk/client-dynamodb");
const { S3Client } = require("@aws-sdk/client-s3");

const api = `http://${process.env.AWS_LAMBDA_RUNTIME_API}/2018-06-01/runtime`;
const clients = {
  dynamodb: new DynamoDBClient({}),
  s3: new S3Client({ forcePathStyle: true }),
};

async function loop() {
  for (;;) {
    const next = await fetch(`${api}/invocation/next`);
    const id = next.headers.get("lambda-runtime-aws-request-id");
    const event = await next.json();
    const answer = {
      statusCode: 401,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        error: "Authentication required",
        code: "UNAUTHORIZED",
        path: event.rawPath ?? null,
        clients: Object.keys(clients),
      }),
    };
    await fetch(`${api}/invocation/${id}/response`, {
      method: "POST",
      body: JSON.stringify(answer),
    });
  }
}

loop().catch((e) => {
  console.error(e);
  process.exit(1);
});
