# accountd: release build in the Swift 6.3 image, run as a non-root user in a slim image.
FROM swift:6.3-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends libsodium-dev libargon2-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
COPY Tests ./Tests
RUN swift build -c release --product accountd --static-swift-stdlib \
    && swift build -c release --product accountctl --static-swift-stdlib \
    && cp "$(swift build -c release --show-bin-path)/accountd" "$(swift build -c release --show-bin-path)/accountctl" /

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends libsodium23 libargon2-1 ca-certificates tzdata \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /app --shell /usr/sbin/nologin accountd
WORKDIR /app
COPY --from=build /accountd /accountctl /app/
COPY migrations /app/migrations
USER accountd
# The admin listener stays on the container's loopback (ACCOUNTD_ADMIN_HOST) unless told otherwise.
ENV ACCOUNTD_HOST=0.0.0.0 ACCOUNTD_PORT=9099 ACCOUNTD_ADMIN_PORT=9098 ACCOUNTD_MIGRATIONS_DIR=/app/migrations
EXPOSE 9099
ENTRYPOINT ["/app/accountd"]
CMD ["serve"]
