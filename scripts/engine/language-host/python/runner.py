# The Python side of this project's Python language host (run.go passes this
# text to `python -c`): configures the Pulumi SDK with the engine's settings
# from the arguments and the stack's configuration from PULUMI_CONFIG and
# PULUMI_CONFIG_SECRET_KEYS, then runs the program's entry point as
# `__main__` inside the stack resource.
import argparse
import asyncio
import logging
import os
import runpy
import sys
import traceback
from concurrent.futures import ThreadPoolExecutor

# The exit code that tells the host the error has been shown already (run.go).
EXIT_AFTER_REPORTED_ERROR = 32

try:
    import pulumi
    import pulumi.runtime
except ImportError:
    sys.stderr.write(
        f"The Pulumi SDK is not installed for {sys.executable}: pip install pulumi into the "
        "virtual environment that Pulumi.yaml's runtime option virtualenv names.\n"
    )
    sys.exit(EXIT_AFTER_REPORTED_ERROR)


def parse_arguments():
    parser = argparse.ArgumentParser(prog="pulumi-language-python runner")
    for name in ("monitor", "engine", "organization", "project", "stack", "root-directory"):
        parser.add_argument(f"--{name}", default="")
    parser.add_argument("--parallel", type=int, default=0)
    parser.add_argument("--dry-run", choices=("true", "false"), default="false")
    parser.add_argument("program")
    parser.add_argument("args", nargs="*")
    return parser.parse_args()


def configure(arguments):
    pulumi.runtime.set_all_config(
        pulumi.runtime.get_config_env(), pulumi.runtime.get_config_secret_keys_env()
    )
    pulumi.runtime.configure(
        pulumi.runtime.Settings(
            monitor=arguments.monitor or None,
            engine=arguments.engine or None,
            organization=arguments.organization or None,
            project=arguments.project,
            stack=arguments.stack,
            root_directory=arguments.root_directory or None,
            parallel=arguments.parallel,
            dry_run=arguments.dry_run == "true",
        )
    )


def event_loop(parallel):
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    # The SDK's blocking gRPC calls run on the loop's default executor: as
    # many threads as the engine runs operations side by side.
    loop.set_default_executor(ThreadPoolExecutor(max_workers=max(parallel, 1)))
    return loop


def main():
    arguments = parse_arguments()
    configure(arguments)
    program = os.path.abspath(arguments.program)
    if os.path.isdir(program) and not os.path.exists(os.path.join(program, "__main__.py")):
        pulumi.log.error(f"no Python program in {program}: it has no __main__.py")
        return EXIT_AFTER_REPORTED_ERROR
    sys.argv = [program, *arguments.args]
    # As `python <file>` does: the program's own modules beside it import.
    # (A folder's __main__.py gets its folder from runpy itself.)
    if not os.path.isdir(program):
        sys.path.insert(0, os.path.dirname(program))
    # A failed resource leaves futures nobody awaits; asyncio's complaints
    # about them would only hide the error the engine shows.
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    loop = event_loop(arguments.parallel)
    try:
        loop.run_until_complete(
            pulumi.runtime.run_in_stack(lambda: runpy.run_path(program, run_name="__main__"))
        )
        return 0
    except pulumi.RunError as error:
        pulumi.log.error(str(error))
    except Exception:
        pulumi.log.error(f"Program failed with an unhandled exception:\n{traceback.format_exc()}")
    finally:
        loop.close()
        sys.stdout.flush()
        sys.stderr.flush()
    return EXIT_AFTER_REPORTED_ERROR


sys.exit(main())
