# syntax=docker/dockerfile:1
# notifyd: a static binary on a distroless base (CA certificates for the
# vendors' HTTPS, no shell, no package manager), running as a non-root user.
#
#   docker build --build-arg VERSION=$(git describe --tags --always) \
#     --build-arg COMMIT=$(git rev-parse --short HEAD) -t notifyd .
#   docker run -p 8080:8080 -v notifyd-data:/data notifyd

FROM golang:1.26-alpine AS build
WORKDIR /src
# Modules first: this layer is reused while only the sources change.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=unknown
# CGO_ENABLED=0: SQLite is the pure-Go modernc driver, so the binary is
# static and runs on a base image without libc.
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false \
      -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" \
      -o /out/notifyd ./cmd/notifyd \
 && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot AS runtime
COPY --from=build /out/notifyd /notifyd
# The embedded SQLite database and its key file live in /data; with
# PostgreSQL the volume stays empty.
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
ENV NOTIFYD_ADDR=:8080 \
    NOTIFYD_DATABASE_URL=sqlite:/data/notifyd.db \
    NOTIFYD_LOG_FORMAT=json
VOLUME ["/data"]
EXPOSE 8080
# The image has no curl: the binary asks its own readiness endpoint
# (NOTIFYD_HEALTH_ADDR when set, as on workers, else NOTIFYD_ADDR).
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["/notifyd", "healthcheck"]
ENTRYPOINT ["/notifyd"]
CMD ["serve"]
