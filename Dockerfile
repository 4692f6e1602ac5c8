# syntax=docker/dockerfile:1
# podplane in one container (docs/deploy.md). Targets:
#   runtime (the default, last stage): the product alone, PODPLANE_BACKEND=aws, no sandbox;
#   demo: the same image plus the sandbox cloud (PODPLANE_BACKEND=sandbox), see compose.yaml.
# The runtime stage is read-only-root friendly: everything it writes goes to PODPLANE_HOME
# (/data, a volume); run it with `--read-only --tmpfs /tmp`.
ARG PYTHON_IMAGE=python:3.11-slim-bookworm
ARG NODE_IMAGE=node:20-bookworm-slim

# 1. The OpenAPI document the console's TypeScript types are generated from (Makefile `console`).
FROM ${PYTHON_IMAGE} AS openapi
WORKDIR /src
COPY pyproject.toml README.md ./
COPY src ./src
RUN python -m venv /opt/venv \
    && /opt/venv/bin/pip install --no-cache-dir --disable-pip-version-check .
COPY web/scripts ./web/scripts
RUN /opt/venv/bin/python web/scripts/dump_openapi.py /src/openapi.json

# 2. The console (React + Vite); vite writes it to ../src/podplane/web/static/console.
FROM ${NODE_IMAGE} AS console
WORKDIR /src/web
COPY web/package.json web/package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error
COPY web/ ./
COPY --from=openapi /src/openapi.json ./openapi.json
RUN npm run --silent gen && npm run --silent build

# 3. The product with its console, installed with `pip install .` alone (never the sandbox).
FROM ${PYTHON_IMAGE} AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY src ./src
COPY --from=console /src/src/podplane/web/static/console ./src/podplane/web/static/console
RUN python -m venv /opt/venv \
    && /opt/venv/bin/pip install --no-cache-dir --disable-pip-version-check .

# 4. The demo's environment: the same venv plus the podplane-sandbox distribution.
FROM build AS demo-build
COPY sandbox ./sandbox
RUN /opt/venv/bin/pip install --no-cache-dir --disable-pip-version-check ./sandbox

# 5. What both images share: a non-root user and its state folder.
FROM ${PYTHON_IMAGE} AS product
RUN groupadd --system --gid 10001 podplane \
    && useradd --system --uid 10001 --gid podplane --home-dir /data --no-create-home \
       --shell /usr/sbin/nologin podplane \
    && mkdir -m 0700 /data && chown podplane:podplane /data
COPY --from=build /opt/venv /opt/venv
# The playbooks `podplane agent install` copies beside an agent's configuration.
COPY skills /opt/podplane/skills
# PODPLANE_HOST: the default 127.0.0.1 would be the container's own loopback, unreachable
# through a published port; publish it on the host's loopback instead (-p 127.0.0.1:3099:3099).
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HOME=/data \
    PODPLANE_HOME=/data \
    PODPLANE_HOST=0.0.0.0 \
    PODPLANE_PORT=3099 \
    PODPLANE_SKILLS=/opt/podplane/skills \
    PODPLANE_BACKEND=aws
VOLUME ["/data"]
EXPOSE 3099
USER 10001:10001
# The only unauthenticated route (api/routers/health.py); python, as the slim image has no curl.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('PODPLANE_PORT', '3099') + '/api/v1/health', timeout=4)"]
ENTRYPOINT ["podplane"]
CMD ["serve"]

# The demo: sandbox cloud and control plane in one container (`podplane up`).
FROM product AS demo
COPY --from=demo-build /opt/venv /opt/venv
ENV PODPLANE_BACKEND=sandbox
CMD ["up"]

# The production image (default target): the product alone, real AWS.
FROM product AS runtime
