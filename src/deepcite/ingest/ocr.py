"""OCR of scanned PDF pages through Debian's ``tesseract`` binary (package ``tesseract-ocr``).

Pages are rendered with PDFium at ``ingest.ocr_dpi`` and piped to ``tesseract - - -l <language>``; no
model is downloaded (the language data comes with the Debian package ``tesseract-ocr-eng``).
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess

import pypdfium2 as pdfium

from deepcite.config import IngestSettings

_POINTS_PER_INCH = 72.0


def available(settings: IngestSettings) -> bool:
    """Whether the tesseract binary named by ``ingest.tesseract_cmd`` is installed."""
    return shutil.which(settings.tesseract_cmd) is not None


def page_text(page: pdfium.PdfPage, settings: IngestSettings) -> list[str]:
    """The lines tesseract reads on ``page`` (blank lines dropped)."""
    bitmap = page.render(scale=settings.ocr_dpi / _POINTS_PER_INCH, grayscale=True)
    image = io.BytesIO()
    bitmap.to_pil().save(image, format="PNG")
    done = subprocess.run(
        [settings.tesseract_cmd, "-", "-", "-l", settings.ocr_language],
        input=image.getvalue(),
        capture_output=True,
        timeout=settings.timeout_s,
        check=False,
        env={**os.environ, "OMP_THREAD_LIMIT": str(settings.ocr_threads)},
    )
    if done.returncode != 0:
        raise RuntimeError(f"tesseract failed: {done.stderr.decode(errors='replace').strip()[:300]}")
    return [
        line.strip() for line in done.stdout.decode("utf-8", errors="replace").splitlines() if line.strip()
    ]
