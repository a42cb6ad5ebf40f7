// Package lambdaemu runs real Lambda `bootstrap` binaries on this machine the
// way AWS Lambda runs them, and puts an API Gateway HTTP API (payload format
// 2.0) in front of them. It is the project's own emulator for the end-to-end
// tier; it shares no code with Amazon's runtime interface emulator.
//
// A Function is one Lambda function: a pool of execution environments, each
// a bootstrap process with its own Runtime API server (version 2018-06-01)
// on 127.0.0.1. As in Lambda, an environment handles one invocation at a
// time, starts on demand (a cold start), gets a clean environment made of
// the Lambda variables and the function's own, and is killed when an
// invocation times out; a killed or crashed environment is replaced by a
// fresh one (a new cold start) at the next invocation.
//
// A Front is an http.Handler that plays API Gateway: it matches a request
// against the routes ("GET /api/v2/projects/{projectKey}"), turns it into an
// events.APIGatewayV2HTTPRequest, invokes the route's function and turns the
// events.APIGatewayV2HTTPResponse back into HTTP. Requests no route matches
// get API Gateway's own answer, 404 {"message":"Not Found"}, whatever the
// method; function failures get 500 {"message":"Internal Server Error"}.
package lambdaemu
