with trips as (
    select
        driver_id,
        cast(start_time as timestamp) as started,
        cast(end_time as timestamp) as ended,
        planned_minutes
    from {{ source('raw', 'trips') }}
),
delays as (
    select
        driver_id,
        cast(date_trunc('month', started) as date) as month,
        date_diff('minute', started, ended) - planned_minutes as delay
    from trips
)
select
    d.driver_id,
    d.month,
    count(*) as trips,
    avg(d.delay) as avg_delay_min,
    100.0 * count(*) filter (where d.delay <= 0) / count(*) as on_time_pct,
    cast(r.active as boolean) as active
from delays as d
join {{ source('raw', 'drivers') }} as r on r.driver_id = d.driver_id
group by d.driver_id, d.month, r.active
