# syntax=docker/dockerfile:1
# flagplane as one container image: the same binary as `make build-local`.
# The default command is the local all-in-one server on the embedded store
# (data in the /data volume); the CDK stack's relay runs it as
# `flagplane relay -addr :8080` (docs/streaming.md). Build from the
# repository root, e.g. `docker build -t flagplane .`; .dockerignore keeps
# the context to the Go sources.

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
# Static (no cgo): the final stage has no C library.
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -ldflags='-s -w' -o /out/flagplane ./functions/flagplane
RUN mkdir -p /out/data

# distroless static: CA certificates and time zones, no shell, and the
# nonroot user (65532).
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/flagplane /flagplane
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
WORKDIR /data
VOLUME /data
EXPOSE 8080
ENTRYPOINT ["/flagplane"]
CMD ["serve", "-addr", ":8080", "-data", "/data/flagplane.db"]
