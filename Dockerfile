# syntax=docker/dockerfile:1.7
# One image for every role; the role is picked at run time by ROLE (api, cpu, gpu, realtime, tests, or all), whose
# default is the build argument ROLE. Two targets:
#   docker build --target runtime     -t vap:cpu .   # Debian 12 + Node 24 (LTS), onnxruntime-node CPU provider
#   docker build --target runtime-gpu -t vap:gpu .   # same, plus CUDA 12 / cuDNN 9 user-space libraries and the
#                                                     # onnxruntime-node CUDA (and TensorRT) execution providers
# The NVIDIA driver is not in the image: the NVIDIA container runtime (or the GPU operator's RuntimeClass) mounts
# it into GPU pods. The build needs the npm registry, Debian's archive and, for runtime-gpu only, NVIDIA's CUDA
# apt repository and the NuGet feed onnxruntime-node downloads its CUDA provider from.

ARG NODE_MAJOR=24
ARG DEBIAN_SUITE=bookworm

# ---- os: Debian + Node 24 (LTS) + the runtime packages the engines shell out to or load (see scripts/setup.sh) ----
FROM node:${NODE_MAJOR}-${DEBIAN_SUITE}-slim AS os
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      ffmpeg flite espeak-ng pocketsphinx pocketsphinx-en-us sphinxbase-utils \
      tesseract-ocr tesseract-ocr-eng apertium apertium-en-es apertium-eo-en \
      apertium-es-pt apertium-es-it apertium-es-ca apertium-es-gl apertium-es-ro apertium-fr-es apertium-en-ca apertium-en-gl \
      sox fonts-dejavu-core tini ca-certificates \
 && rm -rf /var/lib/apt/lists/*

# ---- deps: production npm dependencies, built with the full image (node-gyp toolchain) ----
FROM node:${NODE_MAJOR}-${DEBIAN_SUITE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# onnxruntime-node's postinstall would download the CUDA provider; the CPU image does not need it.
ENV ONNXRUNTIME_NODE_INSTALL=skip
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# ---- deps-gpu: the same tree plus the CUDA 12 execution provider binaries of onnxruntime-node ----
FROM deps AS deps-gpu
ENV ONNXRUNTIME_NODE_INSTALL=cuda12
RUN node node_modules/onnxruntime-node/script/install.js \
 && test -f node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime_providers_cuda.so

# ---- assets: files the platform builds once at set-up (scripts/setup.d), built into the image instead ----
FROM deps AS assets
COPY tsconfig.json ./
COPY shared ./shared
COPY scripts ./scripts
# The local embedding model (GloVe-derived vectors → compact int8 SIF file), outside /app/.data, which the
# Kubernetes Deployments mount as an emptyDir.
RUN EMBEDDINGS_MODEL_PATH=/app/models/glove-sif-100d.bin bash scripts/setup.d/30-embeddings.sh \
 && test -s /app/models/glove-sif-100d.bin
# flite-server, the long-lived flite worker of the local TTS (links libflite; the runtime's flite package has it).
RUN bash scripts/setup.d/40-flite-server.sh && test -x build/flite-server/flite-server
# ps-stream, the streaming pocketsphinx worker of the local live STT (links libpocketsphinx; the runtime's pocketsphinx
# package has it).
RUN bash scripts/setup.d/41-ps-stream.sh && test -x build/ps-stream/ps-stream

# ---- portal: the developer portal's front end (portal/), built with the dev dependencies only this stage needs ----
FROM node:${NODE_MAJOR}-${DEBIAN_SUITE} AS portal
WORKDIR /app
COPY package.json package-lock.json ./
# Vite, Preact and uPlot need no install scripts; skipping them keeps native builds (onnxruntime, …) out.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY portal ./portal
# The portal imports the provider lists (and, as types only, the contracts) from shared/contracts.
COPY shared/contracts ./shared/contracts
COPY scripts/lib ./scripts/lib
COPY scripts/setup.d/40-portal.sh ./scripts/setup.d/
RUN bash scripts/setup.d/40-portal.sh && test -s portal/dist/index.html

# ---- runtime: the CPU image (api, cpu workers, realtime, or all in one) ----
FROM os AS runtime
ARG ROLE=all
ENV NODE_ENV=production \
    ROLE=${ROLE} \
    HOST=0.0.0.0 \
    PORT=8080 \
    S3_EMBEDDED_DIR=/app/.data/s3 \
    EMBEDDINGS_MODEL_PATH=/app/models/glove-sif-100d.bin
WORKDIR /app
COPY --from=deps --chown=node:node /app/node_modules ./node_modules
COPY --from=assets --chown=node:node /app/models ./models
COPY --from=assets --chown=node:node /app/build/flite-server ./build/flite-server
COPY --from=assets --chown=node:node /app/build/ps-stream ./build/ps-stream
# The built portal (hashed assets with .gz/.br siblings), served by the api role under /portal/ (PORTAL_DIST_DIR).
COPY --from=portal --chown=node:node /app/portal/dist ./portal/dist
COPY --chown=node:node package.json package-lock.json tsconfig.json ./
COPY --chown=node:node api ./api
COPY --chown=node:node shared ./shared
COPY --chown=node:node workers ./workers
COPY --chown=node:node scripts ./scripts
# The agent-test runner (`cli agents test`) speaks to its offline vendors (scripted LLM, simulated STT) from support/.
COPY --chown=node:node support ./support
RUN mkdir -p /app/.data && chown node:node /app/.data
# The official Node image's unprivileged user (uid 1000).
USER node
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# tini reaps children (ffmpeg, flite, …) and forwards SIGTERM, so the graceful drain runs (SHUTDOWN_GRACE_MS).
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["sh", "-c", "exec node --import tsx scripts/start.ts \"$ROLE\""]

# ---- os-gpu: CUDA 12 and cuDNN 9 user-space libraries from NVIDIA's Debian 12 repository ----
FROM os AS os-gpu
ARG CUDA_PKG_VERSION=12-6
ARG CUDA_DIR_VERSION=12.6
RUN apt-get update \
 && apt-get install -y --no-install-recommends curl gnupg \
 && curl -fsSLo /tmp/cuda-keyring.deb \
      https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/cuda-keyring_1.1-1_all.deb \
 && dpkg -i /tmp/cuda-keyring.deb && rm /tmp/cuda-keyring.deb \
 && apt-get update \
 && apt-get install -y --no-install-recommends \
      cuda-cudart-${CUDA_PKG_VERSION} libcublas-${CUDA_PKG_VERSION} libcurand-${CUDA_PKG_VERSION} \
      libcufft-${CUDA_PKG_VERSION} libcudnn9-cuda-12 \
 && apt-get purge -y --auto-remove curl gnupg \
 && rm -rf /var/lib/apt/lists/*
ENV LD_LIBRARY_PATH=/usr/local/cuda-${CUDA_DIR_VERSION}/lib64 \
    NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility,video

# ---- runtime-gpu: the GPU worker image (one process per GPU; GPU_DEVICE, GPU_POOLS) ----
FROM os-gpu AS runtime-gpu
ARG ROLE=gpu
ENV NODE_ENV=production \
    ROLE=${ROLE} \
    HOST=0.0.0.0 \
    PORT=8080 \
    S3_EMBEDDED_DIR=/app/.data/s3 \
    EMBEDDINGS_MODEL_PATH=/app/models/glove-sif-100d.bin
WORKDIR /app
COPY --from=deps-gpu --chown=node:node /app/node_modules ./node_modules
COPY --from=assets --chown=node:node /app/models ./models
COPY --from=assets --chown=node:node /app/build/flite-server ./build/flite-server
COPY --from=assets --chown=node:node /app/build/ps-stream ./build/ps-stream
COPY --chown=node:node package.json package-lock.json tsconfig.json ./
COPY --chown=node:node api ./api
COPY --chown=node:node shared ./shared
COPY --chown=node:node workers ./workers
COPY --chown=node:node scripts ./scripts
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=3s --start-period=60s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["sh", "-c", "exec node --import tsx scripts/start.ts \"$ROLE\""]
