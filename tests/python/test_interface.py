"""Each Python function is the run command of its family: its array arguments are the command's
inputs, its keyword options are options the command declares (repix.run_interface, from the same
declaration as `repix help`) with the command's defaults, and its help carries the command's."""

import inspect

import pytest

import repix

FUNCTIONS = {"ecc": repix.ecc, "reconstruct": repix.reconstruct, "edt": repix.edt, "ranklet": repix.ranklet,
             "auto-mi": repix.auto_mi, "ami": repix.ami, "maxtree": repix.maxtree, "area-opening": repix.area_opening}


def test_every_family_has_its_function():
    assert sorted(FUNCTIONS) == sorted(repix.families())


@pytest.mark.parametrize("family", sorted(FUNCTIONS))
def test_arguments_are_the_declared_inputs_and_options(family):
    declared = repix.run_interface(family)
    options = {o["name"]: o for o in declared["options"]}
    outputs = {o["name"] for o in declared["outputs"]}
    params = list(inspect.signature(FUNCTIONS[family]).parameters.values())
    arrays = [p for p in params if p.kind == p.POSITIONAL_OR_KEYWORD and p.name not in options]
    assert len(arrays) == len(declared["inputs"]), (arrays, declared["inputs"])
    for p in params:
        if p in arrays:
            continue
        if p.name == "variant":
            assert p.default is None
        elif p.name.startswith("return_"):  # an optional output: edt's sites
            assert p.name[len("return_"):] in outputs and p.default is False
        else:
            assert p.name in options, f"{p.name} is not an option of `repix run {family}`"
            o = options[p.name]
            if p.default is inspect.Parameter.empty or p.default is None:  # required (area) or the CLI's default
                continue
            if o["flag"]:
                assert p.default is False
            elif isinstance(p.default, tuple):
                assert ",".join(map(str, p.default)) == o["default"]
            else:
                assert str(p.default) == o["default"], (p.name, p.default, o["default"])


@pytest.mark.parametrize("family", sorted(FUNCTIONS))
def test_help_carries_the_commands(family):
    doc = FUNCTIONS[family].__doc__
    declared = repix.run_interface(family)
    assert f"`repix run {family}`" in doc and declared["summary"] in doc
