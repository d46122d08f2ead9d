"""$/GPU-hour: capex annuity, facility, opex and power for owned accelerators, or a rental rate.

Formulas: ../shared/DESIGN.md "Economics". All functions broadcast over scalars and arrays.
"""

from __future__ import annotations

import numpy as np

from econ import units


def capital_recovery_factor(rate_frac, life_years):
    """Capital recovery factor: the yearly payment that repays 1 USD over ``life_years`` at ``rate_frac``.

    Parameters
    ----------
    rate_frac : scalar or array, >= 0 [1/year]
    life_years : scalar or array, > 0 [year]

    Returns
    -------
    scalar or array [1/year]. CRF(0.10, 5) = 0.2637975; CRF(0, n) = 1/n.

    Notes
    -----
    CRF(r, n) = r (1+r)^n / ((1+r)^n - 1) = r / (1 - (1+r)^-n), evaluated as
    r / -expm1(-n log1p(r)) so that r -> 0 tends to 1/n without cancellation (rates are floored at
    1e-12). Standard annuity formula (e.g. Blank & Tarquin, Engineering Economy, ch. 2).
    """
    r = np.maximum(rate_frac, 1e-12)
    return r / -np.expm1(-life_years * np.log1p(r))


def gpu_hour_cost_components(all_in_capex_usd, all_in_power_w, build_usd_per_mw_it, pue, usd_per_kwh,
                             cost_of_capital_frac, accelerator_life_years, facility_life_years,
                             opex_frac_of_capex_per_year, utilization_frac):
    """Owned cost per *utilized* accelerator-hour, split into its parts.

    Parameters
    ----------
    all_in_capex_usd : scalar or array
        Accelerator + server + network share. [USD]
    all_in_power_w : scalar or array
        IT power per accelerator incl. its host/network share. [W]
    build_usd_per_mw_it : scalar or array [USD/MW]
    pue : scalar or array, >= 1 [-]
    usd_per_kwh : scalar or array [USD/kWh]
    cost_of_capital_frac : scalar or array [1/year]
    accelerator_life_years, facility_life_years : scalar or array [year]
    opex_frac_of_capex_per_year : scalar or array [1/year]
    utilization_frac : scalar or array in (0, 1] [-]

    Returns
    -------
    dict of arrays [USD per utilized accelerator-hour]: ``capex``, ``facility``, ``opex``, ``power``.

    Notes
    -----
    DESIGN.md: (capex * CRF_gpu + facility_capex_per_w * power_w * CRF_fac + opex_per_year)
    / (8760 * utilization) + power_w * PUE * usd_per_kwh / 1000. Fixed costs are spread over the hours
    that serve traffic; energy is paid only while serving (idle draw neglected).
    """
    paid_hours = units.HOURS_PER_YEAR * utilization_frac
    capex = all_in_capex_usd * capital_recovery_factor(cost_of_capital_frac, accelerator_life_years) / paid_hours
    facility_usd = build_usd_per_mw_it * all_in_power_w / units.W_PER_MW
    facility = facility_usd * capital_recovery_factor(cost_of_capital_frac, facility_life_years) / paid_hours
    opex = all_in_capex_usd * opex_frac_of_capex_per_year / paid_hours
    power = all_in_power_w / units.W_PER_KW * pue * usd_per_kwh
    return {"capex": capex, "facility": facility, "opex": opex, "power": power}


def usd_per_gpu_hour_owned(*args, **kwargs):
    """Total owned cost per utilized accelerator-hour: the sum of :func:`gpu_hour_cost_components`. [USD/h]"""
    parts = gpu_hour_cost_components(*args, **kwargs)
    return parts["capex"] + parts["facility"] + parts["opex"] + parts["power"]


def usd_per_gpu_hour_rented(rental_usd_per_hour, utilization_frac):
    """Rented cost per utilized accelerator-hour: the rate is paid for every hour. [USD/h]

    Parameters
    ----------
    rental_usd_per_hour : scalar or array [USD/h]
    utilization_frac : scalar or array in (0, 1] [-]
    """
    return rental_usd_per_hour / utilization_frac
