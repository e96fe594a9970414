"""``totem serve`` checks its TLS files before it binds: a wrong one is one plain line."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from entrypoints.totem import main
from tests.service.pki import _issue, _pem


def _serve(tmp_path: Path, cert: bytes, key: bytes) -> tuple[int, str]:
    (tmp_path / "cert.pem").write_bytes(cert)
    (tmp_path / "key.pem").write_bytes(key)
    argv = ["serve", "--address", "127.0.0.1:0", "--db", str(tmp_path / "t.db")]
    argv += ["--tls-cert", str(tmp_path / "cert.pem"), "--tls-key", str(tmp_path / "key.pem")]
    done = CliRunner().invoke(main, argv)
    return done.exit_code, done.output


def test_a_key_that_is_not_the_certificates_is_refused_in_one_line(tmp_path: Path) -> None:
    ours, theirs = _pem(_issue("localhost", None, True)), _pem(_issue("other", None, True))
    code, output = _serve(tmp_path, ours.cert, theirs.key)
    assert code == 1
    lines = output.strip().splitlines()
    assert lines[-1].startswith("Error: the TLS key ")
    assert "does not match the certificate" in lines[-1]
    assert "Traceback" not in output and "bind" not in output.lower()
    assert not (tmp_path / "t.db").exists()


def test_a_key_file_without_a_key_is_refused_in_one_line(tmp_path: Path) -> None:
    ours = _pem(_issue("localhost", None, True))
    code, output = _serve(tmp_path, ours.cert, ours.cert)
    assert code == 1
    assert output.strip().splitlines()[-1].endswith("holds no unencrypted PEM private key")
