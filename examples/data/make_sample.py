#!/usr/bin/env python3
"""Builds sensors_sample.csv (sensor_id,timestamp,value) from public-domain NOAA series bundled in two
PyPI packages. Standard library only; the packages need not be importable, only present:

    pip download --no-deps vega-datasets==0.9.0 statsmodels==0.15.0 -d /tmp/wheels
    python3 make_sample.py /tmp/wheels/vega_datasets-0.9.0-py3-none-any.whl /tmp/wheels/statsmodels-*.whl

(or, with both packages installed, `python3 make_sample.py` finds them). See README.md for the sensors.
"""
import csv
import datetime as dt
import importlib.util
import io
import os
import sys
import zipfile

# (sensor id, member of the vega_datasets package, column, date format)
SEATTLE = [
    (2, "vega_datasets/_data/seattle-weather.csv", "precipitation", "%Y/%m/%d"),
    (3, "vega_datasets/_data/seattle-weather.csv", "temp_max", "%Y/%m/%d"),
    (4, "vega_datasets/_data/seattle-weather.csv", "temp_min", "%Y/%m/%d"),
    (5, "vega_datasets/_data/seattle-weather.csv", "wind", "%Y/%m/%d"),
    (6, "vega_datasets/_data/seattle-temps.csv", "temp", "%Y/%m/%d %H:%M"),
]
CO2 = "statsmodels/datasets/co2/co2.csv"


def opener(source):
    """A function member -> text, reading from a wheel (zip) or an installed package directory."""
    if source.endswith(".whl"):
        wheel = zipfile.ZipFile(source)
        return lambda member: wheel.read(member).decode("utf-8")
    return lambda member: open(os.path.join(source, member), encoding="utf-8").read()


def installed(package):
    spec = importlib.util.find_spec(package)  # locates without importing (no pandas needed)
    if spec is None or not spec.submodule_search_locations:
        sys.exit(f"{package} is not installed; pass the wheel path (see the docstring)")
    return os.path.dirname(list(spec.submodule_search_locations)[0])


def unix_seconds(text, fmt):
    # Naive local times are taken as UTC: the series only need a consistent, sorted clock.
    return int(dt.datetime.strptime(text, fmt).replace(tzinfo=dt.timezone.utc).timestamp())


def main():
    vega = opener(sys.argv[1] if len(sys.argv) > 1 else installed("vega_datasets"))
    statsmodels = opener(sys.argv[2] if len(sys.argv) > 2 else installed("statsmodels"))
    rows = []
    # Sensor 1: Mauna Loa weekly CO2 (ppm), 1958-2001. Missing weeks are empty fields: kept as they are,
    # so the cleaner sees (and counts) real missing readings.
    for r in csv.DictReader(io.StringIO(statsmodels(CO2))):
        rows.append((1, unix_seconds(r["date"], "%Y%m%d"), r["co2"]))
    for sensor, member, column, fmt in SEATTLE:
        for r in csv.DictReader(io.StringIO(vega(member))):
            rows.append((sensor, unix_seconds(r["date"], fmt), r[column]))
    rows.sort(key=lambda r: (r[0], r[1]))
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sensors_sample.csv")
    with open(out, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["sensor_id", "timestamp", "value"])
        w.writerows(rows)
    print(f"wrote {len(rows)} rows to {out}")


if __name__ == "__main__":
    main()
