"""``threads=N`` of the ``hf:`` backend: the option is read, checked against the cores this process
may run on before any model loads, and the model computes on that many torch threads in whichever
thread generates (torch's setting reaches a thread only once, the first time it computes)."""
from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from llm_policies import cpu_cores
from llm_policies.local_stack import smollm2_dir
from llm_policies.specs import SPEC_OPTIONS, check_local_model, parse_target, policy_from_spec
from llm_policies.types import ChatRequest, Sampling
from tests.llm_helpers import OWN_ENGINE


def test_threads_is_an_hf_option_listed_with_its_default():
    assert parse_target("hf:org/model?threads=1").options == {"threads": "1"}
    assert "usable core" in SPEC_OPTIONS["hf"]["threads"]
    with pytest.raises(ValueError, match="unknown option"):  # vllm-local keeps vLLM's own core binding
        parse_target("vllm-local:org/model?threads=1")


@pytest.mark.parametrize("value", ["0", "-1", "1000000"])
def test_threads_out_of_range_are_refused_in_one_line_before_the_model_loads(tmp_path, value):
    cores = cpu_cores.usable_cpus()
    expected = (f"option threads (at most the {cores} cores this process may run on) must be an integer "
                f"in 1..{cores}, got {value}")
    with pytest.raises(ValueError) as refused:  # the folder holds no model: the check comes first
        policy_from_spec(f"hf:{tmp_path}?threads={value}")
    assert str(refused.value) == expected
    with pytest.raises(ValueError, match="option threads must be int, got 'two'"):
        check_local_model(parse_target("hf:org/model?threads=two"))
    check_local_model(parse_target(f"hf:org/model?threads={cores}"))


def test_the_default_is_one_thread_per_usable_core_or_fewer_when_omp_num_threads_says(monkeypatch):
    monkeypatch.setattr(cpu_cores, "usable_cpus", lambda: 6)
    assert cpu_cores.default_threads({}) == 6
    assert cpu_cores.default_threads({"OMP_NUM_THREADS": "2"}) == 2
    assert cpu_cores.default_threads({"OMP_NUM_THREADS": "64"}) == 6  # never more than the usable cores
    assert cpu_cores.default_threads({"OMP_NUM_THREADS": "3,1"}) == 3  # nested levels: the outer one
    assert cpu_cores.default_threads({"OMP_NUM_THREADS": "many"}) == 6
    assert cpu_cores.check_threads(6) == 6
    with pytest.raises(ValueError, match=r"in 1\.\.6, got 7"):
        cpu_cores.check_threads(7)


@pytest.mark.llm
@pytest.mark.slow
@OWN_ENGINE
def test_the_model_generates_on_its_threads_in_every_generating_thread():
    """A batch run in a thread that already computed on another count, and one run through the
    event loop's worker threads, both generate on ``threads``; the count is recorded in describe()."""
    torch = pytest.importorskip("torch")
    from llm_policies.backends.hf_transformers import TransformersBackend

    other = cpu_cores.usable_cpus()
    if other < 2:
        pytest.skip("needs two usable cores to tell the counts apart")
    backend = TransformersBackend(str(smollm2_dir()), dtype="float32", guided=False, threads=1)
    seen: list[int] = []
    real_generate = backend.model.generate

    def generate(*args: Any, **kwargs: Any) -> Any:
        seen.append(torch.get_num_threads())
        return real_generate(*args, **kwargs)

    backend.model.generate = generate
    request = ChatRequest(({"role": "user", "content": "Say hello."},), Sampling(max_tokens=2))

    def in_a_thread_set_to_other() -> None:
        torch.set_num_threads(other)
        torch.ones(4).sum()  # this thread has computed on `other` threads
        backend.generate_sync(request)

    worker = threading.Thread(target=in_a_thread_set_to_other)
    worker.start()
    worker.join()
    torch.set_num_threads(other)
    asyncio.run(backend.generate(request))
    assert seen == [1, 1]
    assert backend.describe()["threads"] == 1
    backend.close()
