# syntax=docker/dockerfile:1
# flagplane as one container image: the binary of `make release`. The
# default command is the local all-in-one server on the embedded store
# (data in the /data volume); `relay` as the command runs the streaming
# relay, as the CDK stack's does with `relay -addr :8080`
# (docs/streaming.md). Build from the repository root: `make image` prints
# the command; .dockerignore keeps the context to the Go sources.

# The builder runs on the build machine's platform and cross-compiles for
# the target's (CDK builds linux/arm64 for Fargate): no emulation. Its Go
# is the go.mod version.
FROM --platform=$BUILDPLATFORM golang:1.26.8 AS build
ARG TARGETOS=linux
ARG TARGETARCH=arm64
WORKDIR /src
COPY go.mod go.sum ./
COPY functions ./functions
COPY shared ./shared
# The version `flagplane version` prints: `make image` passes git
# describe's and the commit (the context has no .git); empty, it is the
# module's "(devel)".
ARG VERSION
ARG REVISION
# The go build of `make release` (functions/flagplane/release_test.go
# checks they stay one): static (no cgo), as the final stage has no C
# library.
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOFLAGS= GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -buildvcs=auto \
    -ldflags="-s -w -X main.version=${VERSION} -X main.revision=${REVISION}" -o /out/flagplane ./functions/flagplane
RUN mkdir -p /out/data

# distroless static: CA certificates and time zones, no shell, and the
# nonroot user (65532).
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/flagplane /flagplane
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
# Both commands listen on the exposed port: `docker run IMAGE` serves every
# route, `docker run IMAGE relay` streams to SDKs (docs/streaming.md).
ENV FLAGPLANE_ADDR=:8080
WORKDIR /data
VOLUME /data
EXPOSE 8080
ENTRYPOINT ["/flagplane"]
CMD ["serve", "-addr", ":8080", "-data", "/data/flagplane.db"]
